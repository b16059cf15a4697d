-- After :PiEvents install (the `installed` fixture), :Telescope pi_events searches with the
-- installed server: no cmd option, no server on PATH (needs TELESCOPE_RTP and PLENARY_RTP).
local H = dofile(arg[1])
H.load_plugins()

H.run(function()
  local server = require("pi_events.server")
  require("pi_events").setup({})
  local c = H.client()
  H.put("client_cmd", c.config.cmd)
  H.put("venv_bin", server.venv_bin(server.exe))
  H.reindex(c)
  vim.o.columns, vim.o.lines = 200, 50
  require("telescope").setup({})
  require("telescope").load_extension("pi_events")
  local action_state = require("telescope.actions.state")
  vim.cmd("Telescope pi_events")
  local picker
  H.check(
    "picker opened",
    H.wait(function()
      picker = action_state.get_current_picker(vim.api.nvim_get_current_buf())
      return picker
    end)
  )
  picker:set_prompt("zebrafish")
  local refs = {}
  H.check(
    "results arrive",
    H.wait(function()
      refs = {}
      for e in picker.manager:iter() do
        table.insert(refs, e.ref)
      end
      return #refs == 2
    end),
    refs
  )
  H.put("entries", refs)
end)
