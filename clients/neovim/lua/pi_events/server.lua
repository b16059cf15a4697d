--- Which pi-event-search server the plugin runs, and which version it is.
---
--- Discovery order: the `cmd` option, else the private virtual environment that
--- `:PiEvents install` fills (in stdpath("data")/pi-event-search), else `pi-event-search` on
--- PATH. It also knows the plugin's own repository checkout (the install source) and its version,
--- so an installed server older than the plugin can be reported.

local config = require("pi_events.config")

local M = {}

M.exe = "pi-event-search"

local windows = vim.fn.has("win32") == 1

---@alias pi_events.ServerHow "cmd"|"installed"|"path"

---@class pi_events.Server
---@field cmd string[]             the command the LSP client runs
---@field path string              the resolved executable
---@field how pi_events.ServerHow  where it was found

--- How each way of finding a server is described to the user.
M.describe = {
  cmd = "the cmd option",
  installed = "installed by :PiEvents install",
  path = "found on PATH",
}

--- Where `:PiEvents install` keeps its venvs and their record (the bootstrap's --home).
---@return string
function M.install_home()
  return vim.fs.joinpath(vim.fn.stdpath("data") --[[@as string]], "pi-event-search")
end

--- The installed venv: the one the bootstrap's record names, else the venv of the plugin's
--- installs before the bootstrap (home/venv), which keeps working until the next install.
---@return string
function M.venv_dir()
  local home = M.install_home()
  local fh = io.open(vim.fs.joinpath(home, "installed.json"), "r")
  if fh then
    local ok, record = pcall(vim.json.decode, fh:read("*a"))
    fh:close()
    if ok and type(record) == "table" and type(record.venv) == "string" then
      return vim.fs.joinpath(home, record.venv)
    end
  end
  return vim.fs.joinpath(home, "venv")
end

--- An executable of the private venv ("pi-event-search" or "python").
---@param name string
---@return string
function M.venv_bin(name)
  return vim.fs.joinpath(M.venv_dir(), windows and "Scripts" or "bin", name .. (windows and ".exe" or ""))
end

---@class pi_events.Checkout
---@field root string          repository root (holds pyproject.toml)
---@field version string|nil   [project] version from pyproject.toml

---@type pi_events.Checkout|false|nil  false = looked, not a checkout
local checkout_cache

--- The repository checkout this plugin runs from: the plugin is clients/neovim of the repository,
--- so the root is two levels above the plugin directory. nil when the plugin was copied alone.
---@return pi_events.Checkout|nil
function M.checkout()
  if checkout_cache == nil then
    checkout_cache = false
    local src = debug.getinfo(1, "S").source:gsub("^@", "")
    src = vim.uv.fs_realpath(src) or src -- a symlinked pack/ directory points into the checkout
    local root = vim.fn.fnamemodify(src, ":p:h:h:h:h:h") -- lua/pi_events/server.lua -> repo
    local fh = io.open(vim.fs.joinpath(root, "pyproject.toml"), "r")
    if fh then
      local text = fh:read("*a")
      fh:close()
      if text:match('\nname%s*=%s*"pi%-event%-search"') then
        checkout_cache = { root = root, version = text:match('\nversion%s*=%s*"([^"]+)"') }
      end
    end
  end
  return checkout_cache or nil
end

--- The project's one installer, in the checkout this plugin runs from (nil when copied alone).
---@return string|nil
function M.bootstrap()
  local co = M.checkout()
  local file = co and vim.fs.joinpath(co.root, "server", "pi_event_search", "bootstrap.py")
  return file and vim.uv.fs_stat(file) and file or nil
end

--- The server to run, or nil and why not.
---@param cfg pi_events.Config|nil
---@return pi_events.Server|nil
---@return string|nil why
function M.resolve(cfg)
  cfg = cfg or config.options
  if cfg.cmd then
    local path = vim.fn.exepath(cfg.cmd[1])
    if path == "" then
      return nil, ("the cmd option's %s is not an executable"):format(cfg.cmd[1])
    end
    return { cmd = cfg.cmd, path = path, how = "cmd" }
  end
  local bin = M.venv_bin(M.exe)
  if vim.fn.executable(bin) == 1 then
    return { cmd = { bin, "serve" }, path = bin, how = "installed" }
  end
  local path = vim.fn.exepath(M.exe)
  if path ~= "" then
    return { cmd = { path, "serve" }, path = path, how = "path" }
  end
  return nil, ("no pi-event-search server: none installed in %s and none on PATH"):format(M.install_home())
end

--- Whether "no server" was reported already (once, not on every buffer); an install resets it.
local missing_reported = false

--- The server to run; when there is none, says so once, pointing at :PiEvents install.
---@return pi_events.Server|nil
function M.find()
  local found, why = M.resolve()
  if not found and not missing_reported then
    missing_reported = true
    vim.notify(
      ("pi_events: %s. Run :PiEvents install (see :checkhealth pi_events)"):format(why),
      vim.log.levels.ERROR
    )
  end
  return found
end

--- Forget that the server was missing (after :PiEvents install put one in place).
function M.forget_missing()
  missing_reported = false
end

--- The version an executable prints with --version (blocks up to `timeout` ms).
---@param path string
---@param timeout integer|nil
---@return string|nil
function M.version(path, timeout)
  local ok, job = pcall(vim.system, { path, "--version" }, { text = true })
  if not ok then
    return nil
  end
  local res = job:wait(timeout or 10000)
  local out = res.code == 0 and vim.trim(res.stdout or "") or ""
  return out:match("^%d[%w.+-]*$")
end

--- Whether version `a` is older than `b` (false when either does not parse).
---@param a string|nil
---@param b string|nil
---@return boolean
function M.older(a, b)
  local va = a and vim.version.parse(a, { strict = false })
  local vb = b and vim.version.parse(b, { strict = false })
  return va ~= nil and vb ~= nil and vim.version.lt(va, vb)
end

--- What to tell the user when `found` (running `version`) is older than the plugin's checkout;
--- nil when it is not, or when the user chose the command (the cmd option).
---@param found pi_events.Server
---@param version string|nil
---@return string|nil
function M.update_hint(found, version)
  local co = M.checkout()
  if found.how == "cmd" or not co or not M.older(version, co.version) then
    return nil
  end
  local what = found.how == "installed" and "the installed server" or ("%s on PATH"):format(found.path)
  return ("%s is pi-event-search %s, older than this plugin's %s: run :PiEvents install to %s"):format(
    what,
    version,
    co.version,
    found.how == "installed" and "update it" or "install it for Neovim"
  )
end

--- An LSP `on_init` that tells the user, once per client, when the server is older than this
--- plugin's checkout (the version comes from the server's `serverInfo`).
---@param found pi_events.Server
---@return fun(c: vim.lsp.Client)
function M.on_init(found)
  return function(c)
    local hint = M.update_hint(found, (c.server_info or {}).version)
    if hint then
      vim.schedule(function()
        vim.notify("pi_events: " .. hint, vim.log.levels.WARN)
      end)
    end
  end
end

return M
