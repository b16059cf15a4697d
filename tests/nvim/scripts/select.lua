-- Without telescope, :PiEvents search prompts with vim.ui.input, lists the hits with
-- vim.ui.select and opens the chosen one's JSONL line.
local H = dofile(arg[1])
H.run_indexed(function(F)
  H.put("has_telescope", (pcall(require, "telescope")))
  local prompts, shown = {}, nil
  vim.ui.input = function(opts, on_confirm)
    table.insert(prompts, opts.prompt)
    on_confirm("zebrafish")
  end
  vim.ui.select = function(items, opts, on_choice)
    shown = {
      kind = opts.kind,
      prompt = opts.prompt,
      items = vim.tbl_map(opts.format_item, items),
      refs = vim.tbl_map(function(h)
        return h.ref
      end, items),
    }
    on_choice(items[1], 1)
  end
  vim.cmd("PiEvents search")
  H.check(
    "opened the chosen hit",
    H.wait(function()
      return vim.api.nvim_buf_get_name(0) == F.session_path
    end),
    { shown = shown, notes = H.result.notifications }
  )
  H.put("prompts", prompts)
  H.put("select", shown or vim.NIL)
  H.put("line", vim.api.nvim_win_get_cursor(0)[1])

  -- A query given on the command line skips the prompt; cancelling the selection does nothing.
  vim.ui.select = function(items, _, on_choice)
    shown = { refs = vim.tbl_map(function(h)
      return h.ref
    end, items) }
    on_choice(nil, nil)
  end
  vim.cmd("enew")
  vim.cmd("PiEvents search reconnect")
  H.wait(function()
    return shown.items == nil
  end)
  H.put("second", shown)
  H.put("second_prompts", #prompts)
  H.put("second_buffer", vim.api.nvim_buf_get_name(0))
end)
