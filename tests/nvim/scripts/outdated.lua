-- An installed server older than the plugin's checkout: the plugin says so when it starts and in
-- :checkhealth; :PiEvents install upgrades it and the warning is gone.
local H = dofile(arg[1])
H.load_plugins()

---@return string[]
local function checkhealth()
  vim.cmd("checkhealth pi_events")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  pcall(vim.cmd, "tabclose")
  return lines
end

---@param prefix string
---@return string[]
local function said(prefix)
  local out = {}
  for _, n in ipairs(H.result.notifications) do
    if vim.startswith(n.msg, prefix) then
      table.insert(out, n.msg)
    end
  end
  return out
end

H.run(function()
  local install = require("pi_events.install")
  local opts = require("pi_events.config").options.install
  opts.package = H.case.old_source
  H.put("old_install", install.run({ sync = true }) or vim.NIL)
  opts.package = nil
  H.put("old_bin", require("pi_events.server").venv_bin("pi-event-search"))

  vim.cmd.edit(vim.fn.fnameescape(H.case.facts.notes))
  require("pi_events").setup({})
  local c = H.client()
  H.put("old_server_version", (c.server_info or {}).version or vim.NIL)
  H.wait(function()
    return #said("pi_events: the installed server") > 0
  end, 5000)
  H.put("start_warning", said("pi_events: the installed server"))
  H.put("health_old", checkhealth())

  local done
  vim.cmd("PiEvents install sync")
  done = install.running() == false
  H.put("sync_done", done)
  local c2 = H.client()
  H.put("new_server_version", (c2.server_info or {}).version or vim.NIL)
  H.put("new_bin", require("pi_events.server").venv_bin("pi-event-search"))
  vim.wait(500)
  H.put("warnings_after", #said("pi_events: the installed server"))
  H.put("health_new", checkhealth())
end)
