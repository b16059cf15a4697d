--- `:PiEvents install`: put the server into a private virtual environment in
--- stdpath("data")/pi-event-search, from this plugin's own checkout (or the `install.package`
--- requirement), without blocking the editor. Running it again installs what changed since.
---
--- The work is the project's one bootstrap (server/pi_event_search/bootstrap.py), run with
--- vim.system; its JSON-lines progress becomes notifications, its stderr (pip) goes to the log.
--- With `sync` (lazy.nvim build steps, headless Neovim) the same run is waited for.

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
---@field installed boolean|nil  false when the installed server was current already
---@field seconds number

---@class pi_events.InstallOpts
---@field sync boolean|nil  wait for the end; default: when no UI is attached (headless, lazy.nvim)
---@field force boolean|nil reinstall even when the installed server is current
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

--- A bootstrap event's message worth showing (its steps, or the wait for another install).
---@param line string
local function progress(line)
  local ok, event = pcall(vim.json.decode, line)
  if ok and type(event) == "table" and (event.event == "step" or event.event == "waiting") then
    notify(event.message .. " ...")
  end
end

--- The bootstrap's last JSON line: its result.
---@param stdout string|nil
---@return table|nil
local function last_event(stdout)
  local lines = vim.split(vim.trim(stdout or ""), "\n")
  local ok, event = pcall(vim.json.decode, lines[#lines] or "")
  return ok and type(event) == "table" and event or nil
end

--- This machine's platform, as the bootstrap names it.
---@return "win32"|"darwin"|"linux"
function M.platform()
  if vim.fn.has("win32") == 1 then
    return "win32"
  end
  return vim.fn.has("mac") == 1 and "darwin" or "linux"
end

--- The Python that runs the bootstrap: the configured one when found; with the default
--- (`python3`), on Windows the `py` launcher or `python` (python.org's installer puts no
--- `python3` on PATH), elsewhere `python3`. The bootstrap itself then picks the newest 3.11+ it
--- finds (on macOS Homebrew's and python.org's before /usr/bin/python3, which is 3.9).
---@param configured string
---@param platform string
---@param exepath fun(name: string): string
---@return string|nil
function M.interpreter(configured, platform, exepath)
  if exepath(configured) ~= "" then
    return configured
  end
  if configured == "python3" and platform == "win32" then
    for _, name in ipairs({ "py", "python" }) do
      if exepath(name) ~= "" then
        return name
      end
    end
  end
  return nil
end

--- What to do when no Python was found, in this platform's words.
---@param configured string
---@param platform string
---@return string
function M.no_python(configured, platform)
  local how = {
    win32 = "winget install Python.Python.3.13, or the installer from python.org",
    darwin = "brew install python@3.13, or the installer from python.org",
    linux = "Debian/Ubuntu: sudo apt install python3 python3-venv",
  }
  return ("%s not found: install Python 3.11 or newer (%s), or set install.python"):format(
    configured,
    how[platform] or how.linux
  )
end

---@alias pi_events.Finish fun(ok: boolean, msg: string, version: string|nil, path: string|nil,
---  installed: boolean|nil)

--- Runs the project's one bootstrap (server/pi_event_search/bootstrap.py of the checkout): it
--- finds Python 3.11+, makes the venv, installs, keeps the record and the lock. This module is
--- only its Neovim face: notifications, the log, the result.
---@param sync boolean
---@param force boolean
---@param finish pi_events.Finish
local function steps(sync, force, finish)
  local configured, pkg = config.options.install.python, config.options.install.package
  local bootstrap = server.bootstrap()
  local python = M.interpreter(configured, M.platform(), vim.fn.exepath)
  if not python then
    return finish(false, M.no_python(configured, M.platform()))
  end
  if not bootstrap then
    return finish(
      false,
      "this copy of the plugin is not in a checkout of the pi-event-search repository, "
        .. "which holds its installer: put pi-event-search on PATH or set the cmd option"
    )
  end
  local co = server.checkout() or {}
  local what = pkg or ("the plugin's checkout %s (%s)"):format(co.root, co.version or "?")
  notify(("installing pi-event-search from %s into %s ..."):format(what, server.install_home()))
  local cmd = { python, bootstrap, "--home", server.install_home(), "--python", python }
  if pkg then
    vim.list_extend(cmd, { "--from", pkg })
  end
  if force then
    table.insert(cmd, "--force")
  end
  exec(sync, cmd, function(res)
    local event = last_event(res.stdout)
    if not event then
      return finish(false, ("the installer exited with %d:\n%s"):format(res.code, tail(res.stderr, 8)))
    elseif event.event == "error" then
      return finish(false, event.message .. (event.fix ~= "" and ("\nfix: " .. event.fix) or ""))
    end
    local version = event.record and event.record.version or nil
    local msg = event.installed and "installed pi-event-search %s: %s"
      or "pi-event-search %s is installed and current: %s"
    finish(true, msg:format(version or "?", event.server), version, event.server, event.installed)
  end, progress)
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
  steps(sync, opts.force == true, function(ok, msg, version, path, installed)
    running = false
    local seconds = (vim.uv.hrtime() - started) / 1e9
    result = { ok = ok, message = msg, version = version, path = path, seconds = seconds }
    result.installed = installed
    if ok then
      notify(("%s (%.1f s)"):format(msg, seconds))
      if installed then
        require("pi_events").after_install()
      end
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
