--- `:checkhealth pi_events`: Neovim version, configuration, which server (path, version, how it
--- was found, how to install one) and its start-up,
--- index state, telescope.

local M = {}

local health = vim.health

local function check_nvim()
  local v = vim.version()
  local text = ("Neovim %d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok(text)
  else
    health.error(text .. ": pi_events needs Neovim 0.10 or newer")
  end
end

local function check_config()
  local config = require("pi_events.config")
  local ok, errors = config.validate(vim.g.pi_events)
  if ok then
    health.ok("configuration is valid")
  else
    health.error("vim.g.pi_events is invalid: " .. table.concat(errors, "; "))
  end
end

--- How to get a server, as checkhealth advice.
---@return string[]
local function install_advice()
  local server = require("pi_events.server")
  local co = server.checkout()
  local from = co and ("from this plugin's checkout %s (version %s)"):format(co.root, co.version or "?")
    or "(needs the plugin's repository checkout, which holds the installer)"
  return {
    (":PiEvents install puts the server into %s, %s; running it again upgrades"):format(
      server.install_home(),
      from
    ),
    "or put pi-event-search on PATH (pipx install pi-event-search),"
      .. " or set setup({ cmd = { '/path/to/pi-event-search', 'serve' } })",
  }
end

---@return vim.lsp.Client|nil
local function check_server()
  local client, server = require("pi_events.client"), require("pi_events.server")
  local found, why = server.resolve()
  if not found then
    local advice = install_advice()
    if require("pi_events.config").options.cmd then
      table.insert(advice, 1, "fix the cmd option, or remove it to use the installed server or PATH")
    end
    health.error("server not found: " .. tostring(why), advice)
    return nil
  end
  local version = server.version(found.path)
  health.ok(
    ("server: %s (%s), version %s; command: %s"):format(
      found.path,
      server.describe[found.how],
      version or "unknown",
      table.concat(found.cmd, " ")
    )
  )
  local hint = server.update_hint(found, version)
  if hint then
    health.warn(hint)
  else
    health.info(install_advice()[1])
  end
  local root = client.root(0)
  local c = client.get(root)
  local started = c == nil
  c = c or client.current()
  if not c or not client.wait_ready(c, 10000) then
    health.error(
      "the server did not start for " .. root,
      { "Run the command by hand and look at its stderr; see :LspLog" }
    )
    return nil
  end
  local info = c.server_info or {}
  health.ok(
    ("server %s: %s %s (client %d, root %s)"):format(
      started and "started" or "running",
      info.name or "pi-event-search",
      info.version or "",
      c.id,
      root
    )
  )
  return c
end

---@param c vim.lsp.Client
local function check_index(c)
  local client = require("pi_events.client")
  local status, err = client.request_sync("piEvents/status", {}, 10000, c)
  if err or not status then
    health.error("piEvents/status failed: " .. tostring(err and err.message))
    return
  end
  local idx = status.index or {}
  health.ok(
    ("index %s: generation %s, %s sessions, %s events visible%s"):format(
      tostring(idx.path),
      tostring(idx.generation),
      tostring(status.sessions),
      tostring(status.events),
      idx.indexing and " (indexing)" or ""
    )
  )
  -- What orders the hits: words and meaning, or words alone and why (a model that did not install).
  if type(status.order) == "string" then
    if status.order:find("^words and meaning") or status.order:find("turned off") then
      health.ok("hits ordered by " .. status.order)
    else
      health.warn("hits ordered by " .. status.order)
    end
  end
  if (tonumber(status.secretEvents) or 0) > 0 then
    health.info(
      ("%d events held credentials: masked everywhere%s"):format(
        status.secretEvents,
        require("pi_events.config").options.reveal_secrets and " but in read views (reveal_secrets)" or ""
      )
    )
  end
  local sources = require("pi_events.render").by_source(status.sessionsBySource)
  if sources then
    health.info("sessions by agent: " .. sources)
  end
  local dirs = status.directories
  if type(dirs) == "table" and #dirs > 0 then
    for _, d in ipairs(dirs) do
      local line = ("session directory %s (%s, %s)%s"):format(
        tostring(d.path),
        tostring(d.layout),
        tostring(d.origin),
        type(d.sessions) == "number" and (": " .. d.sessions .. " sessions visible") or ""
      )
      if d.exists == false then
        health.warn(line .. ": does not exist yet", { "Pi creates it with its first session there" })
      else
        health.info(line)
      end
    end
  else -- an older server: the paths alone
    health.info("session directories: " .. table.concat(status.sessionDirs or {}, ", "))
  end
  health.info("roots: " .. table.concat(status.roots or {}, ", "))
  if status.sessions == 0 then
    health.warn(
      "no session is visible from this root",
      { "A session is visible when its recorded cwd is the root or lies under it" }
    )
  end
  for _, section in ipairs({ "stale", "unavailable" }) do
    local items = status[section] or {}
    if #items > 0 then
      health.warn(("%d %s session(s), e.g. %s"):format(#items, section, tostring(items[1].path)))
    end
  end
end

local function check_telescope()
  if pcall(require, "telescope") then
    health.ok("telescope.nvim found: :Telescope pi_events")
  else
    health.info("telescope.nvim not found: :PiEvents search uses vim.ui.input and vim.ui.select")
  end
end

function M.check()
  health.start("pi_events")
  check_nvim()
  check_config()
  health.start("pi_events: server")
  local c = check_server()
  if c then
    health.start("pi_events: index")
    check_index(c)
  end
  health.start("pi_events: pickers")
  check_telescope()
end

return M
