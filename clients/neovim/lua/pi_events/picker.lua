--- The telescope picker: wraps the plain finder, entry maker and preview of pi_events.search and
--- pi_events.view into telescope objects, and maps the actions. Requires telescope.

local config = require("pi_events.config")
local client = require("pi_events.client")
local search = require("pi_events.search")
local view = require("pi_events.view")

local M = {}

--- Telescope previewer rendering `piEvents/read` of the selected entry, under the entry's
--- `preview_head` lines when it has them (a session's summary).
---@param c vim.lsp.Client|nil
---@return table
function M.previewer(c)
  local previewers = require("telescope.previewers")
  return previewers.new_buffer_previewer({
    title = "Pi event",
    define_preview = function(self, entry)
      view.preview(self.state.bufnr, entry.ref, c, nil, entry.preview_head and entry.preview_head(entry))
    end,
  })
end

--- Keep the server's order: score = position in the answer.
---@return table
function M.sorter()
  local Sorter = require("telescope.sorters").Sorter
  return Sorter:new({
    scoring_function = function(_, _, _, entry)
      return entry.index or 1
    end,
  })
end

---@param prompt_bufnr integer
---@param fn fun(hit: table)
---@param close boolean
local function with_selection(prompt_bufnr, fn, close)
  local actions, state = require("telescope.actions"), require("telescope.actions.state")
  local entry = state.get_selected_entry()
  if not entry then
    return
  end
  if close then
    actions.close(prompt_bufnr)
  end
  fn(entry.value)
end

---@class pi_events.PickerOpts
---@field default_text string|nil  initial query
---@field filters table|nil        `piEvents/search` filters
---@field limit integer|nil
---@field debounce integer|nil

--- Telescope mappings of a picker of hits: <CR> does `default`, each picker key
--- (config.keymaps.picker) its action (pi_events.select.act); all but yank close the picker.
---@param prompt_bufnr integer
---@param map fun(mode: string, lhs: string, fn: function)
---@param default string  the action of <CR>
---@return boolean
local function map_hit_actions(prompt_bufnr, map, default)
  local actions = require("telescope.actions")
  local act = require("pi_events.select").act
  actions.select_default:replace(function()
    with_selection(prompt_bufnr, function(hit)
      act(hit, default)
    end, true)
  end)
  for name, lhs in pairs(config.options.keymaps.picker) do
    if lhs then
      local fn = function()
        with_selection(prompt_bufnr, function(hit)
          act(hit, name)
        end, name ~= "yank")
      end
      map("i", lhs, fn)
      map("n", lhs, fn)
    end
  end
  return true
end

--- Show a telescope picker of hits: the event preview, the hit actions (<CR> does `default`).
---@param opts table  telescope picker options
---@param title string
---@param finder table
---@param c vim.lsp.Client|nil  the client the preview asks
---@param default string
---@return table picker
function M.show(opts, title, finder, c, default)
  local picker = require("telescope.pickers").new(opts, {
    prompt_title = title,
    finder = finder,
    sorter = M.sorter(),
    previewer = M.previewer(c),
    attach_mappings = function(prompt_bufnr, map)
      return map_hit_actions(prompt_bufnr, map, default)
    end,
  })
  picker:find()
  return picker
end

--- A live finder (pi_events.search.new_finder) whose entries carry their position in the
--- answer (`index`, for the sorter); `finder.base` is the plain finder.
---@param base table
---@return table finder
function M.indexed(base)
  local count = 0
  return setmetatable({
    close = function()
      base.close()
    end,
    base = base,
  }, {
    __call = function(_, prompt, on_entry, on_done)
      count = 0
      base(prompt, function(entry)
        count = count + 1
        entry.index = count
        return on_entry(entry)
      end, on_done)
    end,
  })
end

--- Open the live picker over `piEvents/search`.
---@param opts pi_events.PickerOpts|table|nil  also any telescope picker option
---@return table|nil picker
function M.open(opts)
  opts = opts or {}
  local c = client.current()
  if not c then
    return nil
  end
  local shown ---@type table|nil
  local base
  base = search.new_finder({
    client = c,
    limit = opts.limit,
    debounce = opts.debounce,
    filters = opts.filters,
    -- The query rested: once more, settled (read for its meaning), unless the selection moved
    -- off the first hit.
    on_settle = function(prompt)
      local selected = shown and shown:get_selection()
      if not shown or (selected and selected.index ~= 1) or shown:_get_prompt() ~= prompt then
        return
      end
      base.settle_next = prompt
      shown:refresh(nil, { reset_prompt = false }) -- the same finder: closing it would forget settle_next
    end,
  })
  shown = M.show(opts, "Pi events", M.indexed(base), c, "open")
  return shown
end

return M
