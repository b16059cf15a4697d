-- pi_events: search Pi coding-agent sessions from Neovim (server: pi-event-search).
-- Declares the :PiEvents command and highlight groups only; modules load on first use.

if vim.g.loaded_pi_events == 1 then
  return
end
if vim.fn.has("nvim-0.10") ~= 1 then
  vim.api.nvim_echo({ { "pi_events needs Neovim 0.10 or newer", "ErrorMsg" } }, true, {})
  return
end
vim.g.loaded_pi_events = 1

for group, target in pairs({
  PiEventsKind = "Type",
  PiEventsError = "DiagnosticError",
  PiEventsMatch = "Search",
  PiEventsMeta = "Comment",
  PiEventsPartial = "DiagnosticWarn",
  PiEventsLabel = "Identifier",
  PiEventsHeading = "Title",
  PiEventsRef = "Underlined",
}) do
  vim.api.nvim_set_hl(0, group, { link = target, default = true })
end

--- A subcommand that calls one function of a plugin module, loaded on first use; with `pass`,
--- the command's argument goes along (nil when there is none).
---@param module string
---@param name string
---@param pass boolean|nil
---@return fun(args: string)
local function calls(module, name, pass)
  return function(args)
    require(module)[name](pass and args ~= "" and args or nil)
  end
end

---@type table<string, fun(args: string)>
local subcommands = {
  search = calls("pi_events", "search", true),
  sessions = calls("pi_events.sessions", "open", true),
  read = calls("pi_events", "read", true),
  trace = calls("pi_events", "trace", true),
  open = calls("pi_events", "open_source", true),
  status = calls("pi_events", "status"),
  file = calls("pi_events.file", "history"),
  blame = calls("pi_events.file", "blame"),
  reindex = calls("pi_events", "reindex"),
  restart = calls("pi_events", "restart"),
  -- Asynchronous in a UI; synchronous headless (lazy.nvim's `build`) or with "sync"; "force"
  -- reinstalls a server that is current.
  install = function(args)
    local words = vim.split(args, "%s+", { trimempty = true })
    require("pi_events.install").run({
      sync = vim.list_contains(words, "sync") or nil,
      force = vim.list_contains(words, "force"),
    })
  end,
}

vim.api.nvim_create_user_command("PiEvents", function(cmd)
  local sub, rest = cmd.args:match("^%s*(%S*)%s*(.-)%s*$")
  local fn = subcommands[sub ~= "" and sub or "search"]
  if not fn then
    vim.notify("pi_events: unknown subcommand " .. sub, vim.log.levels.ERROR)
    return
  end
  fn(rest)
end, {
  nargs = "*",
  desc = "Pi events: search [query] | sessions [query] | read [ref] | trace [ref] | open [ref] | file"
    .. " | blame | status | reindex | restart"
    .. " | install [sync] [force]",
  complete = function(arglead, cmdline)
    if cmdline:match("^%s*%S+%s+%S+%s") then
      return {}
    end
    local names = vim.tbl_keys(subcommands)
    table.sort(names)
    return vim.tbl_filter(function(n)
      return vim.startswith(n, arglead)
    end, names)
  end,
})
