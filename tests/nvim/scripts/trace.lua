-- :PiEvents trace with the reference under the cursor in a note (the default), with an
-- explicit reference, and on a line of the session JSONL file (the server names its event).
local H = dofile(arg[1])
H.run_indexed(function(F)
  vim.cmd.edit(F.notes)
  local line = vim.api.nvim_buf_get_lines(0, F.notes_ref_line - 1, F.notes_ref_line, false)[1]
  vim.api.nvim_win_set_cursor(0, { F.notes_ref_line, assert(line:find("pi-event:", 1, true)) + 20 })
  vim.cmd("PiEvents trace")
  H.check(
    "trace view shown",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0):match("^pi%-event://trace/")
    end),
    H.result.notifications
  )
  H.put("trace", H.buffer())
  local c = H.client()
  local raw = require("pi_events.client").request_sync("piEvents/trace", { ref = F.ref.r2 }, 10000, c)
  H.put("raw_parent", raw and raw.parent and raw.parent.ref or vim.NIL)

  vim.cmd("enew")
  vim.cmd("PiEvents trace " .. F.ref.u1)
  H.check(
    "explicit trace",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0):find(F.ids.u1, 1, true)
    end)
  )
  H.put("trace_u1", H.buffer())

  vim.cmd.edit(F.session_path)
  vim.api.nvim_win_set_cursor(0, { F.lines.a3, 0 })
  vim.cmd("PiEvents trace")
  H.check(
    "trace from a JSONL line",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0):match("^pi%-event://trace/")
    end),
    H.result.notifications
  )
  H.put("trace_jsonl", H.buffer())

  vim.cmd("enew")
  vim.cmd("PiEvents trace")
  H.put("no_ref_notification", H.result.notifications[#H.result.notifications] or vim.NIL)
end)
