--- Search without telescope: vim.ui.input for the query, one `piEvents/search`, vim.ui.select
--- over the hits, then an action on the chosen hit (open its JSONL line by default).

local config = require("pi_events.config")
local client = require("pi_events.client")
local search = require("pi_events.search")

local M = {}

---@alias pi_events.Action "open"|"read"|"trace"|"yank"

--- Run an action on a hit.
---@param hit table
---@param action pi_events.Action|nil  default "open"
function M.act(hit, action)
  local api, view = require("pi_events"), require("pi_events.view")
  action = action or "open"
  if action == "open" then
    view.open_file(hit.source.path, hit.source.line)
  elseif action == "read" then
    api.read(hit.ref)
  elseif action == "trace" then
    api.trace(hit.ref)
  elseif action == "yank" then
    view.yank(hit.ref)
  end
end

--- The line vim.ui.select shows for a hit.
---@param hit table
---@return string
function M.format_item(hit)
  return (search.display(hit))
end

--- Pick one hit of a query with vim.ui.select.
---@param query string
---@param on_choice fun(hit: table|nil)
function M.pick(query, on_choice)
  local params = { query = query, limit = config.options.limit, prefixLast = false }
  client.request("piEvents/search", params, function(err, result)
    if err then
      vim.notify("pi_events: " .. tostring(err.message), vim.log.levels.ERROR)
      return on_choice(nil)
    end
    local hits = result and result.hits or {}
    if #hits == 0 then
      vim.notify("pi_events: no events match " .. vim.inspect(query), vim.log.levels.INFO)
      return on_choice(nil)
    end
    vim.ui.select(hits, {
      prompt = ("Pi events matching %q"):format(query),
      kind = "pi_events",
      format_item = M.format_item,
    }, function(hit)
      on_choice(hit)
    end)
  end)
end

--- Prompt for a query (unless given), then pick a hit and run `action` on it.
---@param query string|nil
---@param action pi_events.Action|nil
function M.search(query, action)
  local function go(q)
    if q == nil then
      return
    end
    M.pick(q, function(hit)
      if hit then
        M.act(hit, action)
      end
    end)
  end
  if query ~= nil and query ~= "" then
    return go(query)
  end
  vim.ui.input({ prompt = "Search Pi events: " }, go)
end

return M
