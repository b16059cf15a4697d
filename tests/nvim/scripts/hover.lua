-- Hover (K) and go-to-definition (gd) on a pi-event: reference in a Markdown note come from the
-- server through the attached client; an invisible reference gives neither.
local H = dofile(arg[1])
H.run_indexed(function(F)
  vim.cmd.edit(F.notes)
  local notes = vim.api.nvim_get_current_buf()
  local c = H.client()
  H.check(
    "attached",
    H.wait(function()
      return vim.lsp.buf_is_attached(notes, c.id)
    end)
  )
  local line = vim.api.nvim_buf_get_lines(0, F.notes_ref_line - 1, F.notes_ref_line, false)[1]
  local col = assert(line:find("pi-event:", 1, true)) + 12
  vim.api.nvim_win_set_cursor(0, { F.notes_ref_line, col })

  local params = vim.lsp.util.make_position_params(0, c.offset_encoding)
  local hover = vim.lsp.buf_request_sync(notes, "textDocument/hover", params, 10000) or {}
  local contents = hover[c.id] and hover[c.id].result and hover[c.id].result.contents or vim.NIL
  H.put("hover", contents)

  -- K: Neovim's default LSP mapping opens a floating window with the server's Markdown.
  vim.api.nvim_feedkeys("K", "x", false)
  local float
  H.check(
    "K opens a float",
    H.wait(function()
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_config(w).relative ~= "" then
          float = w
          return true
        end
      end
    end, 5000)
  )
  if float then
    H.put("float_lines", vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false))
    vim.api.nvim_win_close(float, true)
  end

  -- gd: jumps to the event's line in its JSONL file.
  vim.api.nvim_set_current_win(vim.fn.win_getid(1))
  vim.api.nvim_win_set_cursor(0, { F.notes_ref_line, col })
  H.put("gd_mapping", vim.fn.maparg("gd", "n", false, true).desc or vim.NIL)
  vim.api.nvim_feedkeys("gd", "x", false)
  H.check(
    "gd jumps",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0) == F.session_path
    end, 10000),
    vim.api.nvim_buf_get_name(0)
  )
  H.put("gd_buffer", vim.api.nvim_buf_get_name(0))
  H.put("gd_line", vim.api.nvim_win_get_cursor(0)[1])
  -- CTRL-O comes back to the note
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-o>", true, false, true), "x", false)
  H.put("back_buffer", vim.api.nvim_buf_get_name(0))

  -- gd off a reference falls back to the built-in gd (no jump to another file).
  vim.cmd.edit(F.notes)
  vim.api.nvim_win_set_cursor(0, { 1, 2 })
  vim.api.nvim_feedkeys("gd", "x", false)
  vim.wait(300)
  H.put("gd_plain_buffer", vim.api.nvim_buf_get_name(0))

  -- A reference to a session outside the workspace: no hover, no definition.
  local inv = vim.api.nvim_buf_get_lines(0, F.notes_ref_line, F.notes_ref_line + 1, false)[1]
  vim.api.nvim_win_set_cursor(0, { F.notes_ref_line + 1, assert(inv:find("pi-event:", 1, true)) + 12 })
  params = vim.lsp.util.make_position_params(0, c.offset_encoding)
  local inv_hover = vim.lsp.buf_request_sync(0, "textDocument/hover", params, 10000) or {}
  local inv_def = vim.lsp.buf_request_sync(0, "textDocument/definition", params, 10000) or {}
  local function result_of(r)
    local x = r[c.id] and r[c.id].result
    return (x == nil or x == vim.NIL or (type(x) == "table" and vim.tbl_isempty(x))) and "none" or x
  end
  H.put("invisible_hover", result_of(inv_hover))
  H.put("invisible_definition", result_of(inv_def))
  H.result.notifications = {}
  vim.api.nvim_feedkeys("gd", "x", false)
  H.wait(function()
    return #H.result.notifications > 0
  end, 5000)
  H.put("invisible_gd", { buffer = vim.api.nvim_buf_get_name(0), notes = H.result.notifications })
end)
