--- Recorded text is untrusted: the server strips control bytes and masks credentials before it
--- answers (docs/protocol.md, Credentials and control bytes). This is the plugin's last guard for
--- what reaches a buffer or the screen, whatever server answered.

local M = {}

--- How many bytes the escape sequence at `i` (an ESC) takes: CSI with at most 64 parameter and 16
--- intermediate bytes and its final byte when there is one; an OSC/DCS/SOS/PM/APC string whole only
--- when at most 4096 printable ASCII bytes end with BEL, ESC \ or ST; otherwise ESC, at most 16
--- intermediates and a final character (an unterminated string loses its introducer only).
---@param text string
---@param i integer
---@return integer
local function escape_length(text, i)
  local c = text:byte(i + 1)
  if c == 0x5b then -- [
    local j = i + 2
    local stop = j + 64
    while j < stop and (text:byte(j) or 0) >= 0x30 and text:byte(j) <= 0x3f do
      j = j + 1
    end
    stop = j + 16
    while j < stop and (text:byte(j) or 0) >= 0x20 and text:byte(j) <= 0x2f do
      j = j + 1
    end
    local f = text:byte(j) or 0
    if f >= 0x40 and f <= 0x7e then
      j = j + 1
    end
    return j - i
  end
  if c == 0x5d or c == 0x50 or c == 0x58 or c == 0x5e or c == 0x5f then -- ] P X ^ _
    local body = text:sub(i + 2, i + 2 + 4096 + 2) -- the body, and room for its terminator
    local stop = body:find("[^ -~]") -- the first byte that is not printable ASCII
    if stop and stop <= 4097 then
      -- ESC and the introducer, stop - 1 body bytes, then the terminator
      local t = body:byte(stop)
      if t == 7 then
        return stop + 2
      elseif t == 27 and body:byte(stop + 1) == 0x5c then
        return stop + 3
      elseif t == 0xc2 and body:byte(stop + 1) == 0x9c then -- ST, as UTF-8
        return stop + 3
      end
    end
  end
  local j = i + 1
  local stop = j + 16
  while j < stop and (text:byte(j) or 0) >= 0x20 and text:byte(j) <= 0x2f do
    j = j + 1
  end
  local f = text:byte(j) or 0
  if f >= 0x30 and f <= 0x7e then
    j = j + 1
  end
  return j - i
end

--- `text` without escape sequences and control characters (newline and tab stay): the one rule
--- of server/pi_event_search/core/secrets.py, tested against tests/data/control-vectors.json.
--- Bounded, so no byte removes more than its own sequence: each C1 character goes alone (Latin-1
--- mojibake, `Ý` read as `Ã\x9d`, keeps its text), as do C0 bytes but tab and newline, DEL, and the
--- bidirectional overrides that reorder what is shown.
---@param text string
---@return string
function M.strip(text)
  local out, i = {}, 1
  while true do
    local s = text:find("[%z\1-\8\11-\31\127\194\226]", i)
    if not s then
      out[#out + 1] = text:sub(i)
      break
    end
    out[#out + 1] = text:sub(i, s - 1)
    local b, n = text:byte(s), 1
    if b == 27 then
      n = escape_length(text, s)
    elseif b == 194 then
      local c = text:byte(s + 1) or 0
      if c >= 0x80 and c <= 0x9f then
        n = 2 -- C1, as UTF-8
      else
        out[#out + 1] = "\194"
      end
    elseif b == 226 then
      local c, d = text:byte(s + 1) or 0, text:byte(s + 2) or 0
      if (c == 0x80 and d >= 0xaa and d <= 0xae) or (c == 0x81 and d >= 0xa6 and d <= 0xa9) then
        n = 3 -- U+202A..U+202E, U+2066..U+2069
      else
        out[#out + 1] = "\226"
      end
    end
    i = s + n
  end
  return table.concat(out)
end

--- `text` with each control character replaced by one space: code point offsets into it (a
--- snippet's matches) stay valid.
---@param text string
---@return string
function M.blank(text)
  local s = text:gsub("\194[\128-\159]", " "):gsub("[%z\1-\31\127]", " ")
  return s
end

return M
