-- The real telescope sessions picker (needs TELESCOPE_RTP and PLENARY_RTP checkouts): an empty
-- prompt lists the sessions newest first, typing searches grouped by session in the order of
-- their strongest hits, <CR> opens the read view of the selected row's top hit.
local H = dofile(arg[1])
H.load_plugins()

---@param picker table
---@return string[]
local function entries(picker)
  local refs = {}
  if picker.manager then
    for e in picker.manager:iter() do
      table.insert(refs, e.ref)
    end
  end
  return refs
end

H.run(function()
  H.setup()
  local c = H.client()
  H.reindex(c)
  vim.o.columns, vim.o.lines = 200, 50
  require("telescope").setup({})
  require("telescope").load_extension("pi_events")
  local raw = require("pi_events.client").request_sync(
    "piEvents/search",
    { query = "zebrafish", limit = 50, prefixLast = true, groupBy = "session" },
    10000,
    c
  )
  H.put(
    "raw_grouped",
    vim.tbl_map(function(g)
      return g.top.ref
    end, raw.sessions)
  )

  local action_state = require("telescope.actions.state")
  vim.cmd("Telescope pi_events sessions")
  local picker
  H.check(
    "picker lists the sessions",
    H.wait(function()
      picker = action_state.get_current_picker(vim.api.nvim_get_current_buf())
      return picker and #entries(picker) == 3
    end),
    picker and entries(picker)
  )
  H.put("listed", entries(picker))
  picker:set_prompt("zebrafish")
  H.check(
    "typing groups the search",
    H.wait(function()
      return #entries(picker) == #raw.sessions
    end),
    entries(picker)
  )
  H.put("grouped", entries(picker))
  H.check(
    "preview shows the session above its top hit",
    H.wait(function()
      local bufnr = picker.previewer and picker.previewer.state and picker.previewer.state.bufnr
      local text = bufnr and table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
      return text and text:find("websocket reconnect fix", 1, true) and text:find("zebrafish", 1, true)
    end)
  )
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  H.check(
    "<CR> opens the read view",
    H.wait(function()
      return vim.startswith(vim.api.nvim_buf_get_name(0), "pi-event://read/")
    end),
    vim.api.nvim_buf_get_name(0)
  )
  H.put("opened", vim.api.nvim_buf_get_name(0))
end)
