--- `pi-event:` references: parsing, formatting and finding the one under the cursor.
---
--- Grammar (docs/protocol.md, Event references; tested against tests/data/ref-vectors.json):
---   pi-event:<sessionId>/<entryId>[#<fragmentId>]
---   sessionId  [A-Za-z0-9][A-Za-z0-9._-]*
---   entryId    [A-Za-z0-9][A-Za-z0-9._~-]*
---   fragmentId [a-z.]+:[0-9]+
--- In text, a reference is not glued to an id character before it, and an entry id without a
--- fragment drops trailing `.`, `-` and `~` (sentence punctuation).

---@class pi_events.Ref
---@field ref string         the reference without its fragment (`pi-event:S/E`)
---@field session_id string
---@field entry_id string
---@field fragment_id string|nil

local M = {}

-- Explicit ASCII sets: %w asks the C library, whose answer depends on the locale; ids are ASCII.
local SESSION = "[A-Za-z0-9][A-Za-z0-9._%-]*"
local ENTRY = "[A-Za-z0-9][A-Za-z0-9._~%-]*"
local ID_CHAR = "[A-Za-z0-9._~%-]"
-- Lua patterns have no optional groups, so the fragment is matched separately.
local BASE = "pi%-event:(" .. SESSION .. ")/(" .. ENTRY .. ")"
local FRAGMENT = "^#([a-z.]+:%d+)"

---@param session_id string
---@param entry_id string
---@param fragment string|nil
---@return pi_events.Ref
local function make(session_id, entry_id, fragment)
  return {
    ref = ("pi-event:%s/%s"):format(session_id, entry_id),
    session_id = session_id,
    entry_id = entry_id,
    fragment_id = fragment,
  }
end

--- The first reference at or after byte `init` of `text` (1-based), if any.
---@param text string
---@param init integer
---@return pi_events.Ref|nil ref
---@return integer|nil first  1-based byte where it starts
---@return integer|nil last   1-based byte where it ends (inclusive)
local function match_at(text, init)
  local s, e, session_id, entry_id = text:find(BASE, init)
  -- `xpi-event:` is a word, not a reference: look again after it.
  while s and s > 1 and text:sub(s - 1, s - 1):find(ID_CHAR) do
    s, e, session_id, entry_id = text:find(BASE, s + 1)
  end
  if not s then
    return nil
  end
  local fragment
  local fs, fe, frag = text:find(FRAGMENT, e + 1)
  if fs then
    fragment, e = frag, fe
  else
    local kept = entry_id:match("^(.-)[.~%-]*$")
    e = e - (#entry_id - #kept)
    entry_id = kept
  end
  return make(session_id, entry_id, fragment), s, e
end

--- Parse a whole reference string (surrounding whitespace allowed).
---@param text string|nil
---@return pi_events.Ref|nil
function M.parse(text)
  if type(text) ~= "string" then
    return nil
  end
  -- The grammar exactly: no sentence punctuation to drop when the string is the reference.
  local trimmed = vim.trim(text)
  local _, e, session_id, entry_id = trimmed:find("^" .. BASE)
  if not e then
    return nil
  end
  local fragment = trimmed:match(FRAGMENT .. "$", e + 1)
  if e < #trimmed and not fragment then
    return nil
  end
  return make(session_id, entry_id, fragment)
end

--- Every reference in a line, with 0-based byte columns [start, end).
---@param line string
---@return {ref: pi_events.Ref, col: integer, end_col: integer}[]
function M.find_all(line)
  local found, init = {}, 1
  while true do
    local ref, s, e = match_at(line, init)
    if not ref then
      return found
    end
    table.insert(found, { ref = ref, col = s - 1, end_col = e })
    init = e + 1
  end
end

--- The reference under (or touching) a 0-based byte column of a line.
---@param line string
---@param col integer
---@return pi_events.Ref|nil
function M.at(line, col)
  for _, hit in ipairs(M.find_all(line)) do
    if col >= hit.col and col < hit.end_col then
      return hit.ref
    end
  end
  return nil
end

--- The reference under the cursor of the current window, if any.
---@return pi_events.Ref|nil
function M.under_cursor()
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  return M.at(line, col)
end

--- Format a reference, with its fragment when given.
---@param ref pi_events.Ref
---@return string
function M.format(ref)
  if ref.fragment_id then
    return ref.ref .. "#" .. ref.fragment_id
  end
  return ref.ref
end

return M
