-- :PiEvents blame (floating preview, `o` opens the event), on a line an edit wrote (a newer and
-- an older writer), on a line nobody wrote and on a trivial one; then :PiEvents file through
-- vim.ui.select (changes before reads; choosing one opens its read view).
local H = dofile(arg[1])
H.load_plugins()

local function press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

H.run(function()
  local F = H.case.facts
  H.setup({ picker = "select" })
  H.reindex(H.client())
  vim.cmd.edit(F.file)
  local file_win = vim.api.nvim_get_current_win()

  vim.api.nvim_win_set_cursor(0, { F.written_line, 0 })
  vim.cmd("PiEvents blame")
  local file = require("pi_events.file")
  H.check(
    "blame float opened",
    H.wait(function()
      return file.last_blame
    end),
    H.result.notifications
  )
  local win = file.last_blame.win
  H.put("float", {
    relative = vim.api.nvim_win_get_config(win).relative,
    entered = vim.api.nvim_get_current_win() == win,
    lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false),
    hit = file.last_blame.result.hit.ref,
    candidates = vim.tbl_map(function(c)
      return c.ref
    end, file.last_blame.result.candidates),
  })
  press("o")
  H.check(
    "o opens the read view",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0):match("^pi%-event://read/")
    end),
    vim.api.nvim_buf_get_name(0)
  )
  H.put("read_buffer", vim.api.nvim_buf_get_name(0))
  H.put("float_closed", not vim.api.nvim_win_is_valid(win))

  vim.api.nvim_set_current_win(file_win)
  vim.cmd.edit(F.file)
  for _, line in ipairs({ F.hand_line, F.trivial_line }) do
    local before = #H.result.notifications
    vim.api.nvim_win_set_cursor(0, { line, 0 })
    vim.cmd("PiEvents blame")
    H.check(
      "said plainly " .. line,
      H.wait(function()
        return #H.result.notifications > before
      end)
    )
  end
  H.put(
    "said",
    vim.tbl_map(function(n)
      return n.msg
    end, H.result.notifications)
  )

  -- :PiEvents file without telescope: vim.ui.select over the history, in the server's order
  local shown
  vim.ui.select = function(items, opts, on_choice)
    shown = { prompt = opts.prompt, refs = {}, lines = {} }
    for _, hit in ipairs(items) do
      table.insert(shown.refs, hit.ref)
      table.insert(shown.lines, opts.format_item(hit))
    end
    on_choice(items[#items])
  end
  vim.cmd("PiEvents file")
  H.check(
    "history shown",
    H.wait(function()
      return shown
    end)
  )
  H.put("history", shown)
  H.check(
    "choice opens the read view",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0):match("^pi%-event://read/")
    end)
  )
  H.put("history_read", vim.api.nvim_buf_get_name(0))
end)
