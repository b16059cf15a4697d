-- :checkhealth pi_events, once with a working server and once with a missing command.
local H = dofile(arg[1])
H.load_plugins()

H.run(function()
  H.setup()
  H.reindex(H.client())
  vim.cmd("checkhealth pi_events")
  H.put("good", vim.api.nvim_buf_get_lines(0, 0, -1, false))
  pcall(vim.cmd, "tabclose")
  vim.cmd("enew")
  for _, c in ipairs(vim.lsp.get_clients()) do
    require("pi_events.client").call(c, "stop")
  end
  H.wait(function()
    return #vim.lsp.get_clients() == 0
  end)
  H.setup({ cmd = { "/nonexistent/pi-event-search", "serve" } })
  vim.cmd("checkhealth pi_events")
  H.put("missing", vim.api.nvim_buf_get_lines(0, 0, -1, false))
end)
