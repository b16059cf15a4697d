--- Options of the pi_events plugin: defaults, merging and validation.
---
--- Owns the option table only; it never starts a server or touches buffers.

---@class pi_events.Keymaps
---@field definition string|false  buffer-local key for "jump to the event's JSONL line" on a reference ("gd")
---@field picker pi_events.PickerKeymaps

---@class pi_events.PickerKeymaps
---@field read string   open the read view of the selected event in a scratch buffer
---@field trace string  open the trace view of the selected event
---@field yank string   yank the selected event's `pi-event:` reference

---@class pi_events.InstallOptions
---@field python string        interpreter that creates the private venv of `:PiEvents install`
---@field package string|nil   pip requirement to install (e.g. "pi-event-search==0.2.0"); nil = the
---                            plugin's own checkout when it is one, else "pi-event-search"

---@class pi_events.Config
---@field cmd string[]|nil              server command; nil = the installed server, else PATH
---@field root string|fun(bufnr: integer): string|nil  fixed workspace root, or a function of the buffer
---@field session_dirs string[]         extra (archive) session directories (`sessionDirs`)
---@field index_path string|nil         SQLite index path (`indexPath`); nil = server default
---@field watch boolean                 let the server follow the session directories
---@field reveal_secrets boolean        read views show credentials as recorded (`revealSecrets`)
---@field extractors table[]|nil        extractor registry (`extractors`); nil = the user file's
---@field attach boolean                attach the client to every normal buffer (hover, gd on references)
---@field filetypes string[]|nil        restrict attaching to these filetypes (nil = any)
---@field max_filesize integer          do not attach to files larger than this many bytes
---@field picker "auto"|"telescope"|"select"  what `:PiEvents search` opens
---@field limit integer                 hits per search (1..200)
---@field debounce integer              milliseconds between the last keystroke and the request
---@field settle integer                milliseconds a query of two words may rest before the picker
---                                     asks it again `settled` (read for its meaning); 0: never
---@field keymaps pi_events.Keymaps
---@field install pi_events.InstallOptions

local M = {}

---@type pi_events.Config
M.defaults = {
  cmd = nil, -- pi_events.server.resolve(): installed venv, then PATH
  root = nil,
  session_dirs = {},
  index_path = nil,
  watch = true,
  reveal_secrets = false,
  extractors = nil,
  attach = true,
  filetypes = nil,
  max_filesize = 1024 * 1024,
  picker = "auto",
  limit = 50,
  debounce = 120,
  settle = 600,
  keymaps = {
    definition = "gd",
    picker = { read = "<C-o>", trace = "<C-t>", yank = "<C-y>" },
  },
  install = { python = "python3", package = nil },
}

---@type pi_events.Config
M.options = vim.deepcopy(M.defaults) -- replaced by M.set() below (vim.g.pi_events) and setup()

---@param v any
---@return boolean
local function is_string_list(v)
  if type(v) ~= "table" then
    return false
  end
  for k, s in pairs(v) do
    if type(k) ~= "number" or type(s) ~= "string" or s == "" then
      return false
    end
  end
  return true
end

---@param kinds string[]
---@return fun(v: any): boolean
local function one_of(kinds)
  return function(v)
    return vim.tbl_contains(kinds, v)
  end
end

---@param lo integer
---@param hi integer
---@return fun(v: any): boolean
local function int_in(lo, hi)
  return function(v)
    return type(v) == "number" and v == math.floor(v) and v >= lo and v <= hi
  end
end

---@param v any
local function key_or_false(v)
  return v == false or (type(v) == "string" and v ~= "")
end

--- Dotted option path -> { check, description }. Unknown keys are errors too.
local rules = {
  cmd = {
    function(v)
      return is_string_list(v) and #v > 0
    end,
    "a non-empty list of strings",
  },
  root = {
    function(v)
      return v == nil or (type(v) == "string" and v ~= "") or type(v) == "function"
    end,
    "nil, a directory or a function(bufnr)",
  },
  session_dirs = { is_string_list, "a list of directories" },
  index_path = {
    function(v)
      return v == nil or (type(v) == "string" and v ~= "")
    end,
    "nil or a file path",
  },
  watch = { one_of({ true, false }), "a boolean" },
  reveal_secrets = { one_of({ true, false }), "a boolean" },
  -- Each entry's shape is the server's to check (a bad entry: a warning, left out).
  extractors = {
    function(v)
      return v == nil
        or (
          vim.islist(v)
          and #v > 0
          and vim.iter(v):all(function(e)
            return type(e) == "table"
          end)
        )
    end,
    "nil or a non-empty list of {customType, fields, label}",
  },
  attach = { one_of({ true, false }), "a boolean" },
  filetypes = {
    function(v)
      return v == nil or is_string_list(v)
    end,
    "nil or a list of filetypes",
  },
  max_filesize = { int_in(0, math.huge), "a non-negative integer" },
  picker = { one_of({ "auto", "telescope", "select" }), '"auto", "telescope" or "select"' },
  limit = { int_in(1, 200), "an integer in 1..200" },
  debounce = { int_in(0, 10000), "an integer number of milliseconds (0..10000)" },
  settle = { int_in(0, 10000), "an integer number of milliseconds (0..10000)" },
  ["keymaps.definition"] = { key_or_false, "a key sequence or false" },
  ["keymaps.picker.read"] = { key_or_false, "a key sequence or false" },
  ["keymaps.picker.trace"] = { key_or_false, "a key sequence or false" },
  ["keymaps.picker.yank"] = { key_or_false, "a key sequence or false" },
  ["install.python"] = {
    function(v)
      return type(v) == "string" and v ~= ""
    end,
    "a Python interpreter (name or path)",
  },
  ["install.package"] = {
    function(v)
      return v == nil or (type(v) == "string" and v ~= "")
    end,
    'nil or a pip requirement such as "pi-event-search==0.2.0"',
  },
}

local tables = { keymaps = true, ["keymaps.picker"] = true, install = true }

---@param opts table
---@param prefix string
---@param errors string[]
local function check_keys(opts, prefix, errors)
  for k, v in pairs(opts) do
    local path = prefix == "" and tostring(k) or (prefix .. "." .. tostring(k))
    if tables[path] then
      if type(v) ~= "table" then
        table.insert(errors, path .. ": expected a table")
      else
        check_keys(v, path, errors)
      end
    elseif not rules[path] then
      table.insert(errors, path .. ": unknown option")
    elseif not rules[path][1](v) then
      table.insert(errors, ("%s: expected %s, got %s"):format(path, rules[path][2], vim.inspect(v)))
    end
  end
end

--- Validate a (partial) option table without merging it.
---@param opts table|nil
---@return boolean ok
---@return string[] errors  one "dotted.path: message" per problem
function M.validate(opts)
  local errors = {}
  if opts == nil then
    return true, errors
  end
  if type(opts) ~= "table" then
    return false, { "options: expected a table, got " .. type(opts) }
  end
  check_keys(opts, "", errors)
  table.sort(errors)
  return #errors == 0, errors
end

--- Merge user options over the defaults (and `vim.g.pi_events`) and store them.
--- Invalid options are reported once with vim.notify and the defaults are kept for them.
---@param opts table|nil
---@return pi_events.Config
function M.set(opts)
  local merged = vim.deepcopy(M.defaults)
  local layers = { vim.g.pi_events, opts }
  for i = 1, 2 do
    local layer = layers[i]
    local ok, errors = M.validate(layer)
    if not ok then
      vim.notify("pi_events: invalid config: " .. table.concat(errors, "; "), vim.log.levels.ERROR)
    else
      merged = vim.tbl_deep_extend("force", merged, layer or {})
      -- Lists replace, never merge element-wise.
      for _, key in ipairs({ "cmd", "session_dirs", "filetypes", "extractors" }) do
        if layer and layer[key] ~= nil then
          merged[key] = vim.deepcopy(layer[key])
        end
      end
    end
  end
  M.options = merged
  return merged
end

--- Initialisation options sent to the server (docs/protocol.md, Initialization).
---@param root string
---@param cfg pi_events.Config|nil
---@return table
function M.init_options(root, cfg)
  cfg = cfg or M.options
  local init = { roots = { root }, watch = cfg.watch, revealSecrets = cfg.reveal_secrets }
  if #cfg.session_dirs > 0 then
    init.sessionDirs = vim.tbl_map(function(d)
      return vim.fs.normalize(d)
    end, cfg.session_dirs)
  end
  if cfg.index_path then
    init.indexPath = vim.fs.normalize(cfg.index_path)
  end
  if cfg.extractors then
    init.extractors = cfg.extractors
  end
  return init
end

-- Commands work without setup(): start from the defaults and vim.g.pi_events.
M.set(nil)

return M
