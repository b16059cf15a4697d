-- The real telescope picker (needs TELESCOPE_RTP and PLENARY_RTP checkouts): live results in
-- server order with match highlights, the previewer, and the <CR>, read, trace and yank keys.
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
  local F = H.case.facts
  H.setup()
  local c = H.client()
  H.reindex(c)
  vim.o.columns, vim.o.lines = 200, 50 -- wide enough for telescope to show its previewer
  require("telescope").setup({})
  require("telescope").load_extension("pi_events")
  local raw = require("pi_events.client").request_sync(
    "piEvents/search",
    { query = "zebrafish", limit = 50, prefixLast = true },
    10000,
    c
  )
  H.put(
    "raw",
    vim.tbl_map(function(h)
      return h.ref
    end, raw.hits)
  )

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
  H.check(
    "results arrive",
    H.wait(function()
      return #entries(picker) == #raw.hits
    end),
    entries(picker)
  )
  H.put("entries", entries(picker))
  vim.wait(200)
  H.put("results_lines", vim.api.nvim_buf_get_lines(picker.results_bufnr, 0, -1, false))
  local marks = vim.api.nvim_buf_get_extmarks(picker.results_bufnr, -1, 0, -1, { details = true })
  local groups = {}
  for _, m in ipairs(marks) do
    groups[m[4].hl_group or "?"] = true
  end
  H.put("result_groups", vim.tbl_keys(groups))
  local selected = action_state.get_selected_entry()
  H.put("selected", selected and selected.ref or vim.NIL)
  H.check(
    "preview shows the event",
    H.wait(function()
      local bufnr = picker.previewer and picker.previewer.state and picker.previewer.state.bufnr
      return bufnr and table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n"):find("zebrafish")
    end)
  )

  -- yank keeps the picker open
  local prompt_bufnr = picker.prompt_bufnr
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-y>", true, false, true), "x", false)
  H.put("yanked", vim.fn.getreg('"'))
  H.put("open_after_yank", vim.api.nvim_buf_is_valid(prompt_bufnr))

  -- <CR> opens the JSONL file at the entry's line
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  H.check(
    "<CR> opens the source",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0) == F.session_path
    end),
    vim.api.nvim_buf_get_name(0)
  )
  H.put("line", vim.api.nvim_win_get_cursor(0)[1])

  -- typing fast: the debounced finder sends one request for the last prompt only
  vim.cmd("PiEvents search")
  local typed
  H.check(
    "PiEvents search opens the picker",
    H.wait(function()
      typed = action_state.get_current_picker(vim.api.nvim_get_current_buf())
      return typed
    end)
  )
  local base = typed.finder.base
  H.wait(function()
    return base.requests >= 1
  end)
  local before = base.requests
  for i = 1, #"zebrafish" do
    typed:set_prompt(("zebrafish"):sub(1, i))
  end
  H.check(
    "typed results",
    H.wait(function()
      return #entries(typed) == #raw.hits and entries(typed)[1] == raw.hits[1].ref
    end),
    entries(typed)
  )
  vim.wait(300)
  H.put("typed_requests", base.requests - before)
  -- telescope's <C-q>: every hit to the quickfix list
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-q>", true, false, true), "x", false)
  H.put(
    "quickfix",
    vim.tbl_map(function(q)
      return { file = vim.api.nvim_buf_get_name(q.bufnr), lnum = q.lnum, text = q.text }
    end, vim.fn.getqflist())
  )
  pcall(vim.cmd, "cclose")

  -- read and trace keys
  for key, kind in pairs({ ["<C-o>"] = "read", ["<C-t>"] = "trace" }) do
    vim.cmd("Telescope pi_events default_text=websocket")
    local p
    H.wait(function()
      p = action_state.get_current_picker(vim.api.nvim_get_current_buf())
      return p and #entries(p) > 0
    end)
    local first = entries(p)[1]
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), "x", false)
    H.check(
      "key " .. key,
      H.wait(function()
        return vim.startswith(vim.api.nvim_buf_get_name(0), "pi-event://" .. kind .. "/")
      end),
      vim.api.nvim_buf_get_name(0)
    )
    H.put(key, { first = first or vim.NIL, buffer = vim.api.nvim_buf_get_name(0) })
  end
end)
