-- :Telescope pi_events file (needs TELESCOPE_RTP and PLENARY_RTP checkouts): the history in the
-- server's order, and <CR> opens the read view.
local H = dofile(arg[1])
H.run_indexed(function(F)
  vim.o.columns, vim.o.lines = 200, 50
  require("telescope").setup({})
  require("telescope").load_extension("pi_events")
  vim.cmd.edit(F.file)
  local action_state = require("telescope.actions.state")
  vim.cmd("Telescope pi_events file")
  local picker
  H.check(
    "picker opened",
    H.wait(function()
      picker = action_state.get_current_picker(vim.api.nvim_get_current_buf())
      return picker and picker.manager and picker.manager:num_results() > 0
    end)
  )
  local refs = {}
  for e in picker.manager:iter() do
    table.insert(refs, e.ref)
  end
  H.put("entries", refs)
  H.put("title", picker.prompt_title)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  H.check(
    "<CR> opens the read view",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0):match("^pi%-event://read/")
    end),
    vim.api.nvim_buf_get_name(0)
  )
  H.put("read_buffer", vim.api.nvim_buf_get_name(0))
end)
