--- Where results go: scratch buffers for the read/trace/status views, the preview buffer of a
--- picker, the JSONL source line, the yank register. Owns buffers and windows, not requests'
--- parameters or rendering.

local render = require("pi_events.render")

local M = {}

M.ns = vim.api.nvim_create_namespace("pi_events")

--- Replace a buffer's content with rendered lines and their highlights.
---@param bufnr integer
---@param rendered pi_events.Rendered
function M.fill(bufnr, rendered)
  local was = vim.bo[bufnr].modifiable
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, rendered.lines)
  vim.bo[bufnr].modifiable = was
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  for _, hl in ipairs(rendered.highlights) do
    local line = rendered.lines[hl[1] + 1] or ""
    local end_col = hl[3] < 0 and #line or math.min(hl[3], #line)
    pcall(vim.api.nvim_buf_set_extmark, bufnr, M.ns, hl[1], hl[2], {
      end_col = end_col,
      hl_group = hl[4],
    })
  end
end

--- Buffer-local keys that act on an event: `keys` maps a key to "read", "trace", "open" (its
--- JSONL line), "yank" or "close"; `target` names the event (nil: there is none here); `before`
--- runs first (a float closes itself).
---@param bufnr integer
---@param keys table<string, "read"|"trace"|"open"|"yank"|"close">
---@param target fun(): string|nil
---@param before fun()|nil
function M.event_keys(bufnr, keys, target, before)
  local api = require("pi_events")
  local actions = { read = api.read, trace = api.trace, open = api.open_source, yank = M.yank }
  for lhs, action in pairs(keys) do
    local rhs = action == "close" and "<cmd>close<cr>"
      or function()
        local ref = target()
        if not ref then
          return vim.notify("pi_events: no pi-event: reference under the cursor", vim.log.levels.INFO)
        end
        if before then
          before()
        end
        actions[action](ref)
      end
    vim.keymap.set("n", lhs, rhs, { buffer = bufnr, nowait = true, desc = "pi_events: " .. action })
  end
end

--- Keys of the read/trace views, acting on the reference under the cursor.
---@param bufnr integer
local function view_keys(bufnr)
  M.event_keys(bufnr, { ["<CR>"] = "read", gd = "open", gt = "trace", yr = "yank", q = "close" }, function()
    local r = require("pi_events.ref").under_cursor()
    return r and r.ref
  end)
end

--- Show rendered lines in the scratch buffer named `name` (reused), in the current window.
---@param name string  e.g. "pi-event://read/<session>/<entry>"
---@param rendered pi_events.Rendered
---@return integer bufnr
function M.show(name, rendered)
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 or not vim.api.nvim_buf_is_valid(bufnr) then
    bufnr = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(bufnr, name)
    vim.bo[bufnr].buftype = "nofile"
    vim.bo[bufnr].bufhidden = "hide"
    vim.bo[bufnr].swapfile = false
    vim.bo[bufnr].filetype = "pi_events"
    view_keys(bufnr)
  end
  vim.bo[bufnr].modifiable = true
  M.fill(bufnr, rendered)
  vim.bo[bufnr].modifiable = false
  vim.api.nvim_win_set_buf(0, bufnr)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  return bufnr
end

---@param kind "read"|"trace"
---@param ref string
---@return string
function M.buffer_name(kind, ref)
  return ("pi-event://%s/%s"):format(kind, (ref:gsub("^pi%-event:", "")))
end

--- Open a file at a 1-based line in the current window.
---@param path string
---@param line integer|nil
function M.open_file(path, line)
  vim.cmd.edit(vim.fn.fnameescape(path))
  if line then
    local last = vim.api.nvim_buf_line_count(0)
    vim.api.nvim_win_set_cursor(0, { math.max(1, math.min(line, last)), 0 })
    vim.cmd("normal! zz")
  end
end

--- Put a reference in the unnamed register (and the clipboard when there is one).
---@param ref string
function M.yank(ref)
  vim.fn.setreg('"', ref)
  if vim.fn.has("clipboard") == 1 then
    pcall(vim.fn.setreg, "+", ref)
  end
  vim.notify("pi_events: yanked " .. ref, vim.log.levels.INFO)
end

local preview_cancel = function()
  return false
end

--- Fill a preview buffer with the read view of a hit (`piEvents/read`, one neighbour each side),
--- under `head` when given. Cancels the previous preview request. `done(result|nil, err|nil)`
--- runs after filling.
---@param bufnr integer
---@param ref string
---@param client vim.lsp.Client|nil
---@param done fun(result: table|nil, err: table|nil)|nil
---@param head pi_events.Rendered|nil
function M.preview(bufnr, ref, client, done, head)
  preview_cancel()
  local function fill(rendered)
    M.fill(bufnr, head and render.concat(head, rendered) or rendered)
  end
  fill({ lines = { "loading " .. ref .. " ..." }, highlights = {} })
  preview_cancel = require("pi_events.client").request(
    "piEvents/read",
    { ref = ref, before = 1, after = 1, length = 4000 },
    function(err, result)
      if not vim.api.nvim_buf_is_valid(bufnr) then
        return
      end
      if err then
        fill({ lines = { "pi-event-search: " .. tostring(err.message) }, highlights = {} })
      else
        fill(render.read(result))
      end
      if done then
        done(result, err)
      end
    end,
    client
  )
end

return M
