-- Shared helpers of the Neovim test scripts (loaded with dofile by each script).
--
-- Each script runs as `nvim --headless --clean -l scripts/<name>.lua <harness.lua> <case.json>`.
-- case.json (written by test_neovim.py) names the plugin directory, the output file, the server
-- command, optional telescope/plenary checkouts and the fixture facts. Scripts record
-- observations with H.put / H.check; H.finish writes them as JSON and exits 0 (1 when a check
-- failed or a Lua error escaped).

local H = {}

local case_path = assert(arg[2], "usage: nvim -l script.lua harness.lua case.json")
local fh = assert(io.open(case_path, "r"))
H.case = vim.json.decode(fh:read("*a"))
fh:close()

H.result = { checks = {}, failed = {}, notifications = {} }

vim.opt.rtp:prepend(H.case.plugin_dir)
if H.case.telescope_rtp and H.case.plenary_rtp then
  vim.opt.rtp:prepend(H.case.plenary_rtp)
  vim.opt.rtp:prepend(H.case.telescope_rtp)
end
vim.opt.swapfile = false
vim.o.shortmess = vim.o.shortmess .. "F"

-- Record notifications instead of printing them.
vim.notify = function(msg, level)
  table.insert(H.result.notifications, { msg = tostring(msg), level = level })
end

--- Load plugin/ files the way Neovim does at startup (-l skips them with --clean).
function H.load_plugins()
  vim.cmd("runtime! plugin/pi_events.lua")
  if H.case.telescope_rtp then
    vim.cmd("runtime! plugin/plenary.vim")
    vim.cmd("runtime! plugin/telescope.lua")
  end
end

---@param key string
---@param value any
function H.put(key, value)
  H.result[key] = value
end

---@param name string
---@param ok any
---@param detail any
function H.check(name, ok, detail)
  H.result.checks[name] = ok and true or false
  if not ok then
    H.result.failed[name] = detail == nil and true or detail
  end
end

---@param cond fun(): any
---@param timeout integer|nil
---@return boolean
function H.wait(cond, timeout)
  return vim.wait(timeout or 10000, function()
    local ok, v = pcall(cond)
    return ok and v and true or false
  end, 20) == true
end

--- setup() with the case's server command and the given extra options.
---@param extra table|nil
function H.setup(extra)
  local opts = vim.tbl_extend("force", { cmd = H.case.server_cmd }, extra or {})
  require("pi_events").setup(opts)
end

--- The running client of the current buffer's root, once initialized.
---@return vim.lsp.Client
function H.client()
  local client = require("pi_events.client")
  local c = assert(client.current(), "no client")
  assert(client.wait_ready(c, 15000), "client did not initialize")
  return c
end

--- Index everything now (piEvents/reindex answers when it is done).
---@param c vim.lsp.Client|nil
---@return table|nil
function H.reindex(c)
  local result, err = require("pi_events.client").request_sync("piEvents/reindex", {}, 30000, c)
  H.check("reindex answered", result ~= nil, err)
  return result
end

--- Current buffer: name and lines.
---@return {name: string, lines: string[], cursor: integer[], filetype: string}
function H.buffer()
  return {
    name = vim.api.nvim_buf_get_name(0),
    lines = vim.api.nvim_buf_get_lines(0, 0, -1, false),
    cursor = vim.api.nvim_win_get_cursor(0),
    filetype = vim.bo.filetype,
  }
end

---@param fn fun()
function H.run(fn)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    H.result.error = err
    H.result.failed.lua_error = err
  end
  H.finish()
end

--- The usual script: plugins loaded, setup() with the case's server, everything indexed, then
--- `fn` with the fixture facts (run as by H.run).
---@param fn fun(F: table)
function H.run_indexed(fn)
  H.load_plugins()
  H.run(function()
    H.setup()
    H.reindex(H.client())
    fn(H.case.facts)
  end)
end

function H.finish()
  for _, c in ipairs(vim.lsp.get_clients()) do
    pcall(function()
      if vim.fn.has("nvim-0.11") == 1 then
        c:stop()
      else
        c.stop()
      end
    end)
  end
  vim.wait(2000, function()
    return #vim.lsp.get_clients() == 0
  end, 20)
  local out = assert(io.open(H.case.out, "w"))
  out:write(vim.json.encode(H.result))
  out:close()
  os.exit(next(H.result.failed) == nil and 0 or 1)
end

return H
