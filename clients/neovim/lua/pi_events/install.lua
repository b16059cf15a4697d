--- `:PiEvents install`: put the server into a private virtual environment in
--- stdpath("data")/pi-event-search/venv, from this plugin's own checkout (or the
--- `install.package` requirement), without blocking the editor. Running it again upgrades.
---
--- Steps: check the Python interpreter, create the venv, `pip install --upgrade <source>`, ask the
--- installed server its version. Each runs with vim.system, chained through callbacks; with
--- `sync` (lazy.nvim build steps, headless Neovim) the same chain waits for each step.

local config = require("pi_events.config")
local server = require("pi_events.server")

local M = {}

--- Milliseconds one step may take (pip downloads the dependencies).
M.timeout = 10 * 60 * 1000

---@class pi_events.InstallResult
---@field ok boolean
---@field message string
---@field version string|nil  installed server version
---@field path string|nil     installed server executable
---@field seconds number

---@class pi_events.InstallOpts
---@field sync boolean|nil  wait for the end; default: when no UI is attached (headless, lazy.nvim)
---@field on_done fun(result: pi_events.InstallResult)|nil

local running = false

---@return boolean
function M.running()
  return running
end

--- Bytes of log kept before a run starts a new one.
M.max_log = 1024 * 1024

--- Where each run writes pip's full output.
---@return string
function M.log_path()
  return vim.fs.joinpath(vim.fn.stdpath("log") --[[@as string]], "pi_events-install.log")
end

---@param msg string
---@param level integer|nil
local function notify(msg, level)
  vim.notify(
    "pi_events: " .. msg,
    level or vim.log.levels.INFO,
    { title = "pi_events", id = "pi_events.install" }
  )
end

---@param text string|nil
---@param n integer
---@return string
local function tail(text, n)
  local lines = vim.tbl_filter(function(l)
    return l ~= "" and not l:match("^WARNING: Location ")
  end, vim.split(text or "", "\n"))
  return table.concat(vim.list_slice(lines, math.max(1, #lines - n + 1)), "\n")
end

---@param path string
---@param text string
local function append_log(path, text)
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  local fh = io.open(path, "a")
  if fh then
    fh:write(text)
    fh:close()
  end
end

--- A vim.system stdout handler that keeps the output and calls `on_line` (scheduled) per line.
---@param chunks string[]
---@param on_line fun(line: string)
---@return fun(err: string|nil, data: string|nil)
local function line_reader(chunks, on_line)
  local partial = ""
  return function(_, data)
    if not data then
      return
    end
    table.insert(chunks, data)
    local lines = vim.split(partial .. data, "\n")
    partial = table.remove(lines)
    for _, line in ipairs(lines) do
      vim.schedule(function()
        on_line(line)
      end)
    end
  end
end

--- Run a command, then call `on_exit` with its result (at once when `sync`).
---@param sync boolean
---@param cmd string[]
---@param on_exit fun(res: vim.SystemCompleted)
---@param on_line fun(line: string)|nil  sees each line of stdout as it comes
local function exec(sync, cmd, on_exit, on_line)
  append_log(M.log_path(), "$ " .. table.concat(vim.tbl_map(vim.fn.shellescape, cmd), " ") .. "\n")
  local t0, chunks = vim.uv.hrtime(), {}
  local function done(res)
    res.stdout = res.stdout or table.concat(chunks)
    local took = ("[exit %d, %.1f s]\n"):format(res.code, (vim.uv.hrtime() - t0) / 1e9)
    append_log(M.log_path(), (res.stdout or "") .. (res.stderr or "") .. took)
    on_exit(res)
  end
  local opts = {
    text = true,
    timeout = M.timeout,
    env = { PIP_DISABLE_PIP_VERSION_CHECK = "1" },
    stdout = on_line and line_reader(chunks, on_line) or nil,
  }
  ---@type vim.SystemCompleted|nil
  local finished
  local ok, err = pcall(vim.system, cmd, opts, function(res)
    finished = res
    if not sync then
      vim.schedule(function()
        done(res)
      end)
    end
  end)
  if not ok then
    return done({ code = 127, signal = 0, stdout = "", stderr = tostring(err) })
  end
  if sync then
    -- Not SystemObj:wait(): it runs fast events only, so the progress lines would come after the end.
    vim.wait(M.timeout + 5000, function()
      return finished ~= nil
    end, 20)
    done(finished or { code = 124, signal = 0, stdout = "", stderr = "timed out" })
  end
end

--- pip's progress worth showing: what it is about to install.
---@param line string
local function pip_progress(line)
  local packages = line:match("^Installing collected packages: (.+)$")
  if packages then
    notify("pip: installing " .. packages .. " ...")
  end
end

--- What to install: the install.package option, else the checkout, else the PyPI name.
---@return string source
---@return string description
local function source()
  local pkg = config.options.install.package
  if pkg then
    return pkg, pkg
  end
  local co = server.checkout()
  if co then
    return co.root, ("the plugin's checkout %s (%s)"):format(co.root, co.version or "?")
  end
  return server.exe, "PyPI (pi-event-search)"
end

local PY_CHECK = "import sys; print('%d.%d' % sys.version_info[:2]); import ensurepip, venv"

---@alias pi_events.Finish fun(ok: boolean, msg: string, version: string|nil)
---@alias pi_events.OnExit fun(res: vim.SystemCompleted)
---@alias pi_events.Step fun(cmd: string[], on_exit: pi_events.OnExit, on_line: fun(line: string)|nil)

--- Whether `python` can create the venv; calls `next` when it can, else `finish` with the reason.
---@param step pi_events.Step
---@param python string
---@param finish pi_events.Finish
---@param next fun()
local function check_python(step, python, finish, next)
  if vim.fn.exepath(python) == "" then
    local msg = "%s not found: install Python 3.11 or newer (Debian/Ubuntu: sudo apt install "
      .. "python3 python3-venv), or set install.python"
    return finish(false, msg:format(python))
  end
  step({ python, "-c", PY_CHECK }, function(res)
    local version = (res.stdout or ""):match("^(%d+%.%d+)")
    if version and server.older(version, "3.11") then
      local msg = "pi-event-search needs Python 3.11 or newer; %s is %s: set install.python"
      return finish(false, msg:format(python, version))
    elseif res.code ~= 0 and (res.stderr or ""):match("No module named '?ensurepip") then
      local msg = "%s cannot create virtual environments (no venv/ensurepip module): "
        .. "sudo apt install python3-venv"
      return finish(false, msg:format(python))
    elseif res.code ~= 0 then
      return finish(false, ("%s does not run:\n%s"):format(python, tail(res.stderr, 6)))
    end
    next()
  end)
end

---@param sync boolean
---@param finish pi_events.Finish
local function steps(sync, finish)
  local venv, python = server.venv_dir(), config.options.install.python
  local vpy, bin = server.venv_bin("python"), server.venv_bin(server.exe)
  local src, what = source()

  ---@type pi_events.Step
  local function step(cmd, on_exit, on_line)
    exec(sync, cmd, function(res)
      local ok, err = pcall(on_exit, res)
      if not ok then
        finish(false, "internal error: " .. tostring(err))
      end
    end, on_line)
  end

  local function verify()
    step({ bin, "--version" }, function(res)
      local version = vim.trim(res.stdout or "")
      if res.code ~= 0 or version == "" then
        return finish(false, "the installed server does not run: " .. tail(res.stderr, 5))
      end
      finish(true, ("installed pi-event-search %s: %s"):format(version, bin), version)
    end)
  end

  local function pip()
    notify(("installing pi-event-search from %s into %s (pip) ..."):format(what, venv))
    step({ vpy, "-m", "pip", "install", "--upgrade", src }, function(res)
      if res.code ~= 0 then
        return finish(false, ("pip exited with %d:\n%s"):format(res.code, tail(res.stderr, 12)))
      end
      verify()
    end, pip_progress)
  end

  local function create()
    notify("creating the virtual environment " .. venv .. " ...")
    local cmd = { python, "-m", "venv", venv }
    if vim.uv.fs_stat(venv) then
      table.insert(cmd, 4, "--clear") -- a venv whose interpreter no longer runs
    end
    step(cmd, function(res)
      if res.code ~= 0 then
        local hint = (res.stderr or ""):match("ensurepip")
            and " (Debian/Ubuntu: sudo apt install python3-venv)"
          or ""
        return finish(false, ("%s -m venv failed%s:\n%s"):format(python, hint, tail(res.stderr, 6)))
      end
      pip()
    end)
  end

  if vim.fn.executable(vpy) == 1 then
    return pip()
  end
  check_python(step, python, finish, create)
end

--- Install (or upgrade) the server. Returns the result when synchronous, else nil (the result
--- goes to `opts.on_done` and to the `User PiEventsInstalled` autocommand).
---@param opts pi_events.InstallOpts|nil
---@return pi_events.InstallResult|nil
function M.run(opts)
  opts = opts or {}
  local sync = opts.sync
  if sync == nil then
    sync = #vim.api.nvim_list_uis() == 0
  end
  if running then
    notify("an install is already running", vim.log.levels.WARN)
    return nil
  end
  running = true
  local started, result = vim.uv.hrtime(), nil
  local stat = vim.uv.fs_stat(M.log_path())
  if stat and stat.size > M.max_log then
    os.remove(M.log_path()) -- the log keeps recent runs only
  end
  append_log(M.log_path(), ("\n== %s :PiEvents install\n"):format(os.date("%Y-%m-%d %H:%M:%S")))
  steps(sync, function(ok, msg, version)
    running = false
    local seconds = (vim.uv.hrtime() - started) / 1e9
    local path = ok and server.venv_bin(server.exe) or nil
    result = { ok = ok, message = msg, version = version, path = path, seconds = seconds }
    if ok then
      notify(("%s (%.1f s)"):format(msg, seconds))
      require("pi_events").after_install()
    else
      notify(("install failed: %s\nfull log: %s"):format(msg, M.log_path()), vim.log.levels.ERROR)
    end
    vim.api.nvim_exec_autocmds("User", { pattern = "PiEventsInstalled", data = result })
    if opts.on_done then
      opts.on_done(result)
    end
  end)
  return result
end

return M
