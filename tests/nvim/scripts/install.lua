-- :PiEvents install into an empty stdpath("data") with no server on PATH (no cmd option), then
-- the installed server searches through the plugin (vim.ui.select fallback) and :checkhealth
-- names it.
local H = dofile(arg[1])
H.load_plugins()

---@return string[]
local function checkhealth()
  vim.cmd("checkhealth pi_events")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  pcall(vim.cmd, "tabclose")
  return lines
end

H.run(function()
  local F = H.case.facts
  local server = require("pi_events.server")
  local install = require("pi_events.install")
  H.put("on_path", vim.fn.exepath("pi-event-search"))
  H.put("home", server.install_home())
  vim.cmd.edit(vim.fn.fnameescape(F.notes))
  require("pi_events").setup({})
  H.put("before", {
    resolved = server.resolve() or vim.NIL,
    clients = #vim.lsp.get_clients(),
    notes = vim.deepcopy(H.result.notifications),
  })
  H.put("health_before", checkhealth())

  -- Without the interpreter: a clear message, no venv left behind.
  local install_opts = require("pi_events.config").options.install
  install_opts.python = "/nonexistent/python3"
  H.put("no_python", install.run({ sync = true }) or vim.NIL)
  H.put("no_python_venv", vim.uv.fs_stat(server.venv_dir()) ~= nil)
  install_opts.python = "python3"

  -- Asynchronous: run() returns while pip still works; the editor keeps running timers meanwhile.
  local result, ticks = nil, 0
  vim.api.nvim_create_autocmd("User", {
    pattern = "PiEventsInstalled",
    once = true,
    callback = function(ev)
      result = ev.data
    end,
  })
  local timer = assert(vim.uv.new_timer())
  timer:start(100, 100, function()
    ticks = ticks + 1
  end)
  local returned = require("pi_events").install({ sync = false })
  H.put("returned", {
    value = returned or vim.NIL,
    running = install.running(),
    installed_yet = vim.fn.executable(server.venv_bin(server.exe)) == 1,
  })
  H.check(
    "install finished",
    H.wait(function()
      return result ~= nil
    end, H.case.install_timeout_ms),
    H.result.notifications
  )
  timer:stop()
  timer:close()
  H.put("result", result or vim.NIL)
  H.put("ticks", ticks)
  H.put("after", { resolved = server.resolve() or vim.NIL, running = install.running() })
  H.put("venv_bin", server.venv_bin(server.exe))

  -- The notes buffer found no server at setup; after the install it has one.
  local c = H.client()
  H.put("client_cmd", c.config.cmd)
  H.put("notes_attached", vim.lsp.buf_is_attached(vim.fn.bufnr(F.notes), c.id))
  H.put("server_version", (c.server_info or {}).version or vim.NIL)
  H.reindex(c)

  local shown
  vim.ui.select = function(items, opts, on_choice)
    shown = { kind = opts.kind, refs = vim.tbl_map(function(h)
      return h.ref
    end, items) }
    on_choice(items[1], 1)
  end
  vim.cmd("PiEvents search zebrafish")
  H.check(
    "the chosen hit opens",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0) == F.session_path
    end),
    { shown = shown, notes = H.result.notifications }
  )
  H.put("select", shown or vim.NIL)
  H.put("line", vim.api.nvim_win_get_cursor(0)[1])
  H.put("health_after", checkhealth())
  H.put("log_exists", vim.uv.fs_stat(install.log_path()) ~= nil)

  -- Again, nothing changed: the installed server is current, nothing restarts.
  H.put("current", install.run({ sync = true }) or vim.NIL)
  H.put("current_same_client", H.client().id == c.id)

  -- Forced: a new venv; the running server restarts on it, buffers stay attached.
  local again
  require("pi_events").install({
    sync = false,
    force = true,
    on_done = function(r)
      again = r
    end,
  })
  H.check(
    "upgrade finished",
    H.wait(function()
      return again ~= nil
    end, H.case.install_timeout_ms),
    H.result.notifications
  )
  local c2 = H.client()
  H.put("upgrade", {
    ok = again and again.ok or vim.NIL,
    path = again and again.path or vim.NIL,
    restarted = c2.id ~= c.id,
    old_stopped = vim.lsp.get_client_by_id(c.id) == nil,
    notes_attached = vim.lsp.buf_is_attached(vim.fn.bufnr(F.notes), c2.id),
    clients = #vim.lsp.get_clients({ name = require("pi_events.client").name }),
  })
  local again_hits =
    require("pi_events.client").request_sync("piEvents/search", { query = "zebrafish", limit = 5 }, 15000, c2)
  H.put("upgrade_hits", again_hits and vim.tbl_map(function(h)
    return h.ref
  end, again_hits.hits) or vim.NIL)

  -- A source pip cannot install fails clearly and keeps the installed server.
  install_opts.package = vim.fn.tempname() .. "-no-such-checkout"
  H.put("bad_source", install.run({ sync = true }) or vim.NIL)
  install_opts.package = nil
  H.put("kept", {
    resolved = server.resolve() or vim.NIL,
    version = server.version(server.venv_bin(server.exe)) or vim.NIL,
  })
end)
