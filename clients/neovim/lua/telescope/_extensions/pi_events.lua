--- Telescope extension `pi_events` (`:Telescope pi_events`): guards, registers and delegates to
--- pi_events.picker.

local ok, telescope = pcall(require, "telescope")
if not ok then
  error("pi_events: the telescope extension needs nvim-telescope/telescope.nvim")
end

---@type table
local ext_opts = {}

---@param opts table|nil
local function pick(opts)
  return require("pi_events.picker").open(vim.tbl_extend("force", ext_opts, opts or {}))
end

return telescope.register_extension({
  setup = function(opts)
    ext_opts = opts or {}
  end,
  exports = {
    pi_events = pick,
    search = pick,
    sessions = function(opts)
      return require("pi_events.sessions").telescope(vim.tbl_extend("force", ext_opts, opts or {}))
    end,
    file = function(opts)
      return require("pi_events.file").telescope(vim.tbl_extend("force", ext_opts, opts or {}))
    end,
  },
})
