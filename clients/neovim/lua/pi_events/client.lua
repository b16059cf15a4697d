--- The language client: workspace root, find-or-start per root, attach to buffers, requests.
---
--- Works on Neovim 0.10 and 0.11 (client methods are called with `:` on 0.11, `.` on 0.10).
--- It owns no rendering: callers get plain Lua results or an error table.

local config = require("pi_events.config")

local M = {}

M.name = "pi_event_search"

local has_011 = vim.fn.has("nvim-0.11") == 1

---@class pi_events.ServerState
---@field generation integer|nil  last `piEvents/indexChanged` generation
---@field indexing boolean|nil
---@field changed_sessions integer|nil

--- Per client id: what the server told us through notifications.
---@type table<integer, pi_events.ServerState>
M.state = {}

--- The workspace root of a buffer: the configured root, else its Git root, else the cwd.
---@param bufnr integer|nil
---@return string
function M.root(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = config.options.root
  if type(root) == "function" then
    root = root(bufnr)
  end
  if type(root) ~= "string" or root == "" then
    root = vim.fs.root(bufnr, ".git") or vim.fn.getcwd()
  end
  local real = vim.uv.fs_realpath(vim.fs.normalize(root))
  return real or vim.fs.normalize(root)
end

local handlers = {
  ["piEvents/indexChanged"] = function(_, params, ctx)
    local st = M.state[ctx.client_id] or {}
    st.generation = params and params.generation
    st.indexing = params and params.indexing
    st.changed_sessions = params and params.changedSessions
    M.state[ctx.client_id] = st
    vim.api.nvim_exec_autocmds("User", { pattern = "PiEventsIndexChanged", data = params })
  end,
}

--- When the last long-indexing message was shown (ms, vim.uv.now()).
local progress_shown = nil ---@type integer|nil

--- A long index (the server's reports carry "about N s left") is also said with vim.notify, at most
--- every 3 s; Neovim's own handler still feeds LspProgress and statuslines. Short passes stay quiet.
---@param err any
---@param params {token: any, value: {kind: string, message: string|nil, percentage: integer|nil}}|nil
---@param ctx table
---@param cfg table|nil
handlers["$/progress"] = function(err, params, ctx, cfg)
  local default = vim.lsp.handlers["$/progress"]
  local result = default and default(err, params, ctx, cfg)
  local value = params and params.value
  if type(value) ~= "table" then
    return result
  end
  local now = vim.uv.now()
  if value.kind == "report" and type(value.message) == "string" and value.message:find("left") then
    if progress_shown == nil or now - progress_shown >= 3000 then
      progress_shown = now
      vim.notify("pi_events: indexing " .. value.message, vim.log.levels.INFO)
    end
  elseif value.kind == "end" and progress_shown ~= nil then
    progress_shown = nil
    vim.notify("pi_events: index up to date", vim.log.levels.INFO)
  end
  return result
end

--- Client ids this plugin started, per root. vim.lsp.get_clients() leaves out clients that are
--- still initializing; vim.lsp.get_client_by_id() does not.
---@type table<string, integer>
local started = {}

---@param c vim.lsp.Client|nil
---@return boolean
local function alive(c)
  return c ~= nil and not (c.is_stopped and M.call(c, "is_stopped"))
end

--- The running (or starting) client for a root, if any.
---@param root string
---@return vim.lsp.Client|nil
function M.get(root)
  local c = started[root] and vim.lsp.get_client_by_id(started[root])
  if alive(c) then
    return c
  end
  for _, other in ipairs(vim.lsp.get_clients({ name = M.name })) do
    if other.config.root_dir == root and alive(other) then
      return other
    end
  end
  return nil
end

--- Call a client method on both 0.10 (dot call) and 0.11 (method call).
---@param client vim.lsp.Client
---@param method string
---@return any
function M.call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
end

--- Start (or reuse) the client for `root` and attach it to `bufnr` when given.
---@param root string
---@param bufnr integer|nil  buffer to attach; nil starts the client without attaching
---@return integer|nil client_id
function M.ensure(root, bufnr)
  local existing = M.get(root)
  if existing and (bufnr == nil or vim.lsp.buf_is_attached(bufnr, existing.id)) then
    return existing.id
  elseif existing then
    return vim.lsp.buf_attach_client(assert(bufnr), existing.id) and existing.id or nil
  end
  local cfg = config.options
  local found = require("pi_events.server").find()
  if not found then
    return nil
  end
  local lsp_config = {
    name = M.name,
    cmd = found.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } },
    init_options = config.init_options(root, cfg),
    handlers = handlers,
    on_init = require("pi_events.server").on_init(found),
  }
  local id
  if bufnr == nil and has_011 then
    id = vim.lsp.start(lsp_config, { attach = false })
  elseif bufnr == nil then
    -- 0.10's vim.lsp.start always attaches: start detached through the lower level API.
    id = vim.lsp.start_client(lsp_config)
  else
    id = vim.lsp.start(lsp_config, { bufnr = bufnr })
  end
  if id then
    started[root] = id
  end
  return id
end

--- Whether the plugin attaches the client to this buffer.
---@param bufnr integer
---@return boolean
function M.wants(bufnr)
  local cfg = config.options
  if not cfg.attach or not vim.api.nvim_buf_is_valid(bufnr) then
    return false
  end
  if vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  if cfg.filetypes and not vim.tbl_contains(cfg.filetypes, vim.bo[bufnr].filetype) then
    return false
  end
  local size = vim.fn.getfsize(name)
  return size <= cfg.max_filesize
end

--- Attach the client of the buffer's root to the buffer (starting it when needed).
---@param bufnr integer|nil
---@return integer|nil client_id
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not M.wants(bufnr) then
    return nil
  end
  return M.ensure(M.root(bufnr), bufnr)
end

--- The client serving the current buffer's root (started when needed, not attached).
---@return vim.lsp.Client|nil
function M.current()
  local bufnr = vim.api.nvim_get_current_buf()
  local root = M.root(bufnr)
  local id = M.get(root) and M.get(root).id or M.ensure(root, M.wants(bufnr) and bufnr or nil)
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- Wait until the client finished `initialize` (or `timeout` ms passed).
---@param client vim.lsp.Client
---@param timeout integer|nil
---@return boolean
function M.wait_ready(client, timeout)
  return vim.wait(timeout or 10000, function()
    return client.initialized == true
  end, 20) == true
end

---@alias pi_events.Handler fun(err: table|nil, result: any)

--- Run `send` once the client finished `initialize` (the server answers nothing useful before).
--- Returns a cancel function like M.request's.
---@param client vim.lsp.Client
---@param send fun(): fun(): boolean  sends the request, returns its cancel function
---@param handler pi_events.Handler   gets the error when the server never initializes
---@return fun(): boolean cancel
function M.after_init(client, send, handler)
  local timer = assert(vim.uv.new_timer())
  local cancelled, waited = false, 0
  local inner = function()
    return false
  end
  timer:start(
    20,
    20,
    vim.schedule_wrap(function()
      waited = waited + 20
      if cancelled or timer:is_closing() then
        return
      end
      local stopped = client.is_stopped and M.call(client, "is_stopped")
      if client.initialized or stopped or waited >= M.init_timeout then
        timer:stop()
        timer:close()
        if client.initialized then
          inner = send()
        else
          handler({ code = -32099, message = "pi-event-search server did not start (see :LspLog)" }, nil)
        end
      end
    end)
  )
  return function()
    if cancelled then
      return false
    end
    cancelled = true
    if not timer:is_closing() then
      timer:stop()
      timer:close()
      return true
    end
    return inner()
  end
end

--- Milliseconds requests wait for a starting server.
M.init_timeout = 20000

--- Report a request's error (vim.notify); whether there was one.
---@param err table|nil
---@return boolean failed
function M.failed(err)
  if err then
    vim.notify("pi_events: " .. tostring(err.message), vim.log.levels.ERROR)
    return true
  end
  return false
end

--- Answer `handler` that there is no server; the cancel function of a request never sent.
---@param handler pi_events.Handler
---@return fun(): boolean
local function not_running(handler)
  handler({ code = -32099, message = "pi-event-search server is not running" }, nil)
  return function()
    return false
  end
end

--- Send a request; returns a cancel function (a no-op once answered).
---@param method string
---@param params table
---@param handler pi_events.Handler
---@param client vim.lsp.Client|nil  default: the current buffer's client
---@param bufnr integer|nil  buffer whose pending changes are sent first (position requests)
---@return fun(): boolean cancel  true when it cancelled a request still in flight
function M.request(method, params, handler, client, bufnr)
  client = client or M.current()
  if not client then
    return not_running(handler)
  end
  if not client.initialized then
    return M.after_init(client, function()
      return M.request(method, params, handler, client, bufnr)
    end, handler)
  end
  local done = false
  local ok, id = M.call(client, "request", method, params, function(err, result)
    done = true
    handler(err, result)
  end, bufnr)
  if not ok then
    return not_running(handler)
  end
  return function()
    if done then
      return false
    end
    done = true
    M.call(client, "cancel_request", id)
    return true
  end
end

--- Send a request and wait for its answer.
---@param method string
---@param params table
---@param timeout integer|nil  milliseconds (default 10000)
---@param client vim.lsp.Client|nil
---@return any result
---@return table|nil err
function M.request_sync(method, params, timeout, client)
  local answered, err, result = false, nil, nil
  local cancel = M.request(method, params, function(e, r)
    answered, err, result = true, e, r
  end, client)
  if not vim.wait(timeout or 10000, function()
    return answered
  end, 10) then
    cancel()
    return nil, { code = -32800, message = "timed out waiting for " .. method }
  end
  return result, err
end

return M
