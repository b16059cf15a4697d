-- Issue 30: the read, trace and status views, the hit lines of the search finder and the
-- health report over a session holding planted credentials and a recorded escape sequence;
-- with `reveal_secrets = true` (case.reveal) the read view shows the value.
local H = dofile(arg[1])
H.load_plugins()

---@param cmd string
---@param pattern string
---@return table buffer
local function view(cmd, pattern)
  vim.cmd("enew")
  vim.cmd(cmd)
  H.check(
    cmd,
    H.wait(function()
      return vim.api.nvim_buf_get_name(0):match(pattern)
    end),
    H.result.notifications
  )
  return H.buffer()
end

H.run(function()
  H.setup({ reveal_secrets = H.case.reveal })
  local c = H.client()
  H.reindex(c)
  local F = H.case.facts
  local views = {}
  for _, ref in ipairs(F.refs) do
    table.insert(views, view("PiEvents read " .. ref, "^pi%-event://read/"))
    table.insert(views, view("PiEvents trace " .. ref, "^pi%-event://trace/"))
  end
  table.insert(views, view("PiEvents status", "pi%-event://status$"))
  H.put("views", views)
  local search = require("pi_events.search")
  local lines = {}
  for _, q in ipairs({ "", "redacted", "zephyrine", "key", "token" }) do
    local result =
      require("pi_events.client").request_sync("piEvents/search", search.params(q, { limit = 200 }), 10000, c)
    for _, hit in ipairs(result and result.hits or {}) do
      table.insert(lines, (search.display(hit)))
    end
  end
  H.put("hit_lines", lines)
  vim.cmd("checkhealth pi_events")
  H.put("health", vim.api.nvim_buf_get_lines(0, 0, -1, false))
end)
