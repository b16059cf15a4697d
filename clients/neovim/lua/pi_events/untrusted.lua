--- Recorded text is untrusted: the server strips control bytes and masks credentials before it
--- answers (docs/protocol.md, Credentials and control bytes). This is the plugin's last guard for
--- what reaches a buffer or the screen, whatever server answered.

local M = {}

--- `text` without escape sequences and control characters (newline and tab stay).
---@param text string
---@return string
function M.strip(text)
  local s = text
    :gsub("\27%[[0-?]*[ -/]*[@-~]?", "") -- CSI
    :gsub("\27[%]PX^_][^\7\27]*\7?", "") -- OSC, DCS, APC, PM, SOS (up to BEL)
    :gsub("\27\\", "") -- ST left by the above
    :gsub("\27[ -~]?", "")
    :gsub("\194[\128-\159]", "") -- C1, as UTF-8
    :gsub("\226\128[\170-\174]", "") -- U+202A..U+202E: bidirectional overrides
    :gsub("\226\129[\166-\169]", "") -- U+2066..U+2069
    :gsub("[%z\1-\8\11-\31\127]", "")
  return s
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
