-- :PiEvents read <ref> (scratch read view), :PiEvents open <ref> (JSONL line), and the read
-- view's own keys.
local H = dofile(arg[1])
H.run_indexed(function(F)
  vim.cmd("PiEvents read " .. F.ref.r2)
  H.check(
    "read view shown",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0):match("^pi%-event://read/")
    end),
    H.result.notifications
  )
  H.put("read", H.buffer())
  H.put("read_modifiable", vim.bo.modifiable)

  -- <CR> on a neighbour reference opens that event's read view.
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  for i, l in ipairs(lines) do
    if l:find(F.ref.a2, 1, true) and not l:match("^#") then
      vim.api.nvim_win_set_cursor(0, { i, l:find("pi-event:", 1, true) + 2 })
      break
    end
  end
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  H.check(
    "read view follows a neighbour",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0):find(F.ids.a2, 1, true)
    end),
    H.buffer()
  )
  H.put("neighbour_first_line", vim.api.nvim_buf_get_lines(0, 0, 1, false)[1])

  vim.cmd("PiEvents open " .. F.ref.r2)
  H.check(
    "open jumps to the JSONL line",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0) == F.session_path
    end),
    H.buffer().name
  )
  H.put("open_line", vim.api.nvim_win_get_cursor(0)[1])

  -- a fragment reference reads that fragment only
  local a1 = "pi-event:" .. F.session .. "/" .. F.ids.a1
  vim.cmd("PiEvents read " .. a1)
  H.wait(function()
    return vim.api.nvim_buf_get_name(0):find(F.ids.a1, 1, true)
  end)
  H.put(
    "whole",
    vim.tbl_filter(function(l)
      return l:match("^## ") ~= nil
    end, vim.api.nvim_buf_get_lines(0, 0, -1, false))
  )
  vim.cmd("enew")
  vim.cmd("PiEvents read " .. a1 .. "#tool.call:1")
  H.wait(function()
    return vim.api.nvim_buf_get_name(0):find(F.ids.a1, 1, true)
  end)
  H.put(
    "fragment",
    vim.tbl_filter(function(l)
      return l:match("^## ") ~= nil
    end, vim.api.nvim_buf_get_lines(0, 0, -1, false))
  )

  vim.cmd("PiEvents read pi-event:nope/deadbeef")
  H.wait(function()
    return #H.result.notifications > 0
  end, 5000)
  H.put("notifications", H.result.notifications)
end)
