--- Rendering of server answers (`piEvents/read`, `piEvents/trace`, `piEvents/status`) into
--- buffer lines. Pure: result table in, `pi_events.Rendered` out; no buffers, no requests.

---@class pi_events.Highlight
---@field [1] integer  0-based line
---@field [2] integer  0-based start byte
---@field [3] integer  end byte (exclusive, -1 = end of line)
---@field [4] string   highlight group

---@class pi_events.Rendered
---@field lines string[]
---@field highlights pi_events.Highlight[]

local short_time = require("pi_events.search").short_time
local find_refs = require("pi_events.ref").find_all
local strip = require("pi_events.untrusted").strip

local M = {}

---@class pi_events.Builder
local Builder = {}
Builder.__index = Builder

---@return pi_events.Builder
local function builder()
  return setmetatable({ lines = {}, highlights = {} }, Builder)
end

--- Add a line (newlines in `text` become several lines); optional group over the whole line.
--- `pi-event:` references get the PiEventsRef group.
---@param text string
---@param group string|nil
function Builder:add(text, group)
  for _, piece in ipairs(vim.split(strip(text or ""), "\n", { plain = true })) do
    table.insert(self.lines, piece)
    local row = #self.lines - 1
    if group then
      table.insert(self.highlights, { row, 0, -1, group })
    end
    for _, r in ipairs(find_refs(piece)) do
      table.insert(self.highlights, { row, r.col, r.end_col, "PiEventsRef" })
    end
  end
end

--- Add `label: value` with the label highlighted; skipped when value is nil or empty.
---@param label string
---@param value any
function Builder:field(label, value)
  if value == nil or value == vim.NIL or value == "" then
    return
  end
  self:add(("%-11s %s"):format(label .. ":", tostring(value)))
  table.insert(self.highlights, { #self.lines - 1, 0, #label + 1, "PiEventsLabel" })
end

---@return pi_events.Rendered
function Builder:done()
  return { lines = self.lines, highlights = self.highlights }
end

---@param v any
---@return boolean
local function present(v)
  return v ~= nil and v ~= vim.NIL
end

--- One line for a node (read neighbours, trace): `<ref>  <kind>  <time>  <preview>`.
---@param node table|nil
---@return string
function M.node_line(node)
  if not present(node) then
    return "(none)"
  end
  if node.masked then
    return "(masked: not visible from this workspace)"
  end
  local preview = (present(node.preview) and node.preview or ""):gsub("%s+", " ")
  local kind = node.kind or node.entryType or "?"
  local branch = (present(node.branchState) and node.branchState ~= "selected")
      and (" [" .. node.branchState .. "]")
    or ""
  return ("%s  %s  %s%s  %s"):format(node.ref or "?", kind, short_time(node.timestamp), branch, preview)
end

---@param b pi_events.Builder
---@param title string
---@param nodes table[]|nil
local function node_list(b, title, nodes)
  if not present(nodes) or #nodes == 0 then
    return
  end
  b:add("")
  b:add(("## %s (%d)"):format(title, #nodes), "PiEventsHeading")
  for _, node in ipairs(nodes) do
    b:add("  " .. M.node_line(node))
  end
end

--- The read view: header, fragments' text, omitted parts, neighbours.
---@param result table  `piEvents/read` result
---@return pi_events.Rendered
function M.read(result)
  local b = builder()
  local ev, src = result.event or {}, result.source or {}
  b:add("# " .. (ev.ref or "pi-event"), "PiEventsHeading")
  local what = ev.entryType or "?"
  if present(ev.role) then
    what = what .. " / " .. ev.role
  end
  if present(ev.toolName) then
    what = what .. " / " .. ev.toolName
  end
  b:field("type", what)
  b:field("kinds", present(ev.kinds) and table.concat(ev.kinds, ", ") or nil)
  b:field("time", ev.timestamp)
  b:field(
    "session",
    present(ev.sessionName) and (ev.sessionName .. " (" .. ev.sessionId .. ")") or ev.sessionId
  )
  b:field("cwd", ev.cwd)
  b:field("parent", present(ev.parentId) and ev.parentId or nil)
  b:field(
    "state",
    ("branch %s, %s, %s"):format(
      tostring(ev.branchState),
      tostring(ev.contextRole),
      tostring(ev.selectionState)
    )
  )
  if ev.isError == true then
    b:add("error:      yes", "PiEventsError")
  end
  local edit = ev.contextEdit
  if type(edit) == "table" and present(edit.ref) then
    -- Pi 1.x: a context edit decides this entry's part of the model context; the text is the original
    b:field(
      "edit",
      ("%s by %s (shown: the original)"):format(
        edit.replacement == "removed" and "removed from the model context"
          or "content replaced in the model context",
        edit.ref
      )
    )
  end
  b:field("source", present(src.path) and (src.path .. ":" .. tostring(src.line)) or nil)
  for _, frag in ipairs(result.fragments or {}) do
    b:add("")
    local head = ("## %s"):format(frag.fragmentId or frag.kind or "?")
    if frag.truncated then
      head = head
        .. ("  (%d-%d of %d)"):format(
          frag.offset or 0,
          (frag.offset or 0) + (frag.length or 0),
          frag.totalLength or 0
        )
    end
    b:add(head, "PiEventsHeading")
    b:add(frag.text or "")
  end
  if present(result.omitted) and #result.omitted > 0 then
    b:add("")
    b:add("## omitted", "PiEventsHeading")
    for _, o in ipairs(result.omitted) do
      local extra = present(o.mimeType) and (" " .. o.mimeType) or ""
      local size = present(o.bytes) and (", " .. o.bytes .. " bytes") or ""
      b:add(("  %s: %s%s%s"):format(o.field or "?", o.reason or "?", extra, size), "PiEventsMeta")
    end
  end
  local nb = result.neighbours
  if present(nb) then
    node_list(b, "before", nb.before)
    node_list(b, "after", nb.after)
    node_list(b, "alternatives", nb.alternatives)
    if nb.stoppedAtFork then
      b:add("  (stopped at a fork: pick one of the alternatives)", "PiEventsMeta")
    end
  end
  return b:done()
end

--- A titled list: a blank line, `## title (n)`, then one line per item; nothing when empty.
---@param b table  the builder
---@param title string
---@param items table?
---@param line fun(item: table): string
---@param counted boolean?  show the count in the heading (default true)
local function section(b, title, items, line, counted)
  if not present(items) or #items == 0 then
    return
  end
  b:add("")
  b:add(counted == false and ("## " .. title) or ("## %s (%d)"):format(title, #items), "PiEventsHeading")
  for _, item in ipairs(items) do
    b:add(line(item))
  end
end

--- The trace view: the event, its family, relations, files, lineage and labels.
---@param result table  `piEvents/trace` result
---@return pi_events.Rendered
function M.trace(result)
  local b = builder()
  local ev = result.event or {}
  b:add("# trace " .. (ev.ref or "?"), "PiEventsHeading")
  b:add(M.node_line(ev))
  b:add("")
  b:field("parent", present(result.parent) and M.node_line(result.parent) or "(root)")
  if present(result.towardLeaf) then
    local toward = result.towardLeaf
    if present(result.towardLeafRef) then
      toward = toward .. " " .. result.towardLeafRef
    end
    b:field("to leaf", toward)
  end
  if present(result.labels) and #result.labels > 0 then
    b:field("labels", table.concat(result.labels, ", "))
  end
  node_list(b, "children", result.children)
  node_list(b, "siblings", result.siblings)
  section(b, "relations", result.relations, function(rel)
    local arrow = rel.direction == "in" and "<-" or "->"
    return ("  %s %s [%s] %s"):format(arrow, rel.type or "?", rel.label or "?", M.node_line(rel.node))
  end)
  section(b, "files", result.files, function(f)
    return ("  %-8s %s [%s]"):format(f.op or "?", f.path or "?", f.label or "?")
  end)
  section(b, "lineage", result.lineage, function(l)
    if l.masked then
      return "  " .. (l.relation or "?") .. ": (masked)"
    end
    local anchor = present(l.forkAnchor) and ("  fork at " .. M.node_line(l.forkAnchor)) or ""
    return ("  %s: %s %s%s"):format(l.relation or "?", l.sessionId or "?", l.path or "", anchor)
  end, false)
  return b:done()
end

--- Two renderings one after the other (highlights of the second moved down).
---@param a pi_events.Rendered
---@param b pi_events.Rendered
---@return pi_events.Rendered
function M.concat(a, b)
  local lines, highlights = vim.list_extend({}, a.lines), vim.list_extend({}, a.highlights)
  local shift = #a.lines
  vim.list_extend(lines, b.lines)
  for _, hl in ipairs(b.highlights) do
    table.insert(highlights, { hl[1] + shift, hl[2], hl[3], hl[4] })
  end
  return { lines = lines, highlights = highlights }
end

--- A session's summary (a group of the grouped search, or an entry of `piEvents/sessions`), shown
--- above the read view of its strongest hit (or its first event) in a preview.
---@param s table  Group or SessionInfo
---@return pi_events.Rendered
function M.session(s)
  local b = builder()
  b:add("# " .. (present(s.name) and s.name or "(unnamed session)"):gsub("%s+", " "), "PiEventsHeading")
  b:field("session", s.sessionId)
  b:field("cwd", present(s.cwd) and s.cwd or nil)
  b:field("started", present(s.started) and s.started or nil)
  b:field("updated", present(s.updated) and s.updated or nil)
  local events = tostring(s.events or 0) .. " indexed"
  if present(s.matches) then
    events = ("%d of %d match"):format(s.matches, s.events or 0)
  end
  b:field("events", events)
  if present(s.kinds) and type(s.kinds) == "table" then
    local kinds = {}
    for kind, n in pairs(s.kinds) do
      table.insert(kinds, { kind, n })
    end
    table.sort(kinds, function(x, y)
      return x[2] ~= y[2] and x[2] > y[2] or x[1] < y[1]
    end)
    b:field(
      "kinds",
      table.concat(
        vim.tbl_map(function(k)
          return k[1] .. " " .. k[2]
        end, kinds),
        ", "
      )
    )
  end
  b:field("parent", present(s.parentSession) and s.parentSession or nil)
  b:field("file", s.path)
  b:field("first", present(s.firstPrompt) and s.firstPrompt or nil)
  b:add("")
  return b:done()
end

local SOURCES = { pi = "Pi", omp = "Oh My Pi" }

--- The sessions by the agent that wrote them ("Oh My Pi 2, Pi 10"), when another agent than Pi
--- wrote some; nil otherwise.
---@param counts table<string, integer>|nil
---@return string|nil
function M.by_source(counts)
  if type(counts) ~= "table" then
    return nil
  end
  local names, other = {}, false
  for source in pairs(counts) do
    names[#names + 1] = source
    other = other or source ~= "pi"
  end
  if not other then
    return nil
  end
  table.sort(names)
  local parts = {}
  for _, source in ipairs(names) do
    parts[#parts + 1] = ("%s %d"):format(SOURCES[source] or source, counts[source])
  end
  return table.concat(parts, ", ")
end

--- The status view: index state and what this workspace may see.
---@param result table  `piEvents/status` result
---@return pi_events.Rendered
function M.status(result)
  local b = builder()
  local idx = result.index or {}
  b:add("# pi-event-search status", "PiEventsHeading")
  b:field("index", idx.path)
  b:field("size", present(idx.bytes) and (idx.bytes .. " bytes") or nil)
  b:field("schema", idx.schemaVersion)
  b:field("generation", idx.generation)
  b:field("indexing", idx.indexing and "yes" or "no")
  b:field("sessions", result.sessions)
  b:field("by source", M.by_source(result.sessionsBySource))
  b:field("events", result.events)
  b:field("fragments", result.fragments)
  if present(result.secretEvents) and result.secretEvents > 0 then
    b:field("secrets", result.secretEvents .. " events held credentials (masked)")
  end
  b:field("roots", present(result.roots) and table.concat(result.roots, ", ") or nil)
  if present(result.directories) and #result.directories > 0 then
    for _, d in ipairs(result.directories) do
      local count = present(d.sessions) and (": " .. d.sessions .. " sessions") or ""
      b:field("dir", ("%s (%s, %s)%s"):format(d.path, d.layout, d.origin, count))
    end
  else
    b:field("dirs", present(result.sessionDirs) and table.concat(result.sessionDirs, ", ") or nil)
  end
  for _, name in ipairs({ "stale", "unavailable", "duplicates", "skipped" }) do
    section(b, name, result[name], function(it)
      local why = present(it.error) and ("  " .. it.error) or ""
      return ("  %s %s%s"):format(it.sessionId or "?", it.path or "", why)
    end)
  end
  return b:done()
end

return M
