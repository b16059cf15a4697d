-- Sessions without telescope: :PiEvents sessions lists them with vim.ui.select (newest first) and
-- opens the chosen one's first event; with a query, the grouped search, a row per session standing
-- for its strongest hit. Then the finder and preview that :Telescope pi_events sessions wraps.
local H = dofile(arg[1])
local SLOW = 30000 -- server-bound waits on a loaded machine; a hang still fails

---@param rows table[]
---@param field string  the event a row stands for: "first" or "top"
---@return string[]
local function refs_of(rows, field)
  return vim.tbl_map(function(r)
    return r[field].ref
  end, rows)
end

H.run_indexed(function(F)
  H.put("has_telescope", (pcall(require, "telescope")))
  local c = H.client()
  local request_sync = require("pi_events.client").request_sync
  local sessions = require("pi_events.sessions")

  -- What the server answers, to compare the views with.
  local raw_list = request_sync("piEvents/sessions", { limit = 50 }, 10000, c)
  H.put("raw_list", refs_of(raw_list.sessions, "first"))
  local raw_grouped = request_sync(
    "piEvents/search",
    { query = "zebrafish", limit = 50, prefixLast = false, groupBy = "session" },
    10000,
    c
  )
  H.put("raw_grouped", refs_of(raw_grouped.sessions, "top"))
  local raw_hits =
    request_sync("piEvents/search", { query = "zebrafish", limit = 50, prefixLast = false }, 10000, c)
  H.put(
    "raw_hits",
    vim.tbl_map(function(h)
      return { ref = h.ref, sessionId = h.sessionId }
    end, raw_hits.hits)
  )
  local raw_prefix = request_sync(
    "piEvents/search",
    { query = "zebraf", limit = 50, prefixLast = true, groupBy = "session" },
    10000,
    c
  )
  H.put("raw_grouped_prefix", refs_of(raw_prefix.sessions, "top"))

  -- :PiEvents sessions, then :PiEvents sessions zebrafish: record what vim.ui.select shows, pick.
  local shown, pick = nil, 1
  vim.ui.select = function(items, opts, on_choice)
    shown = {
      kind = opts.kind,
      prompt = opts.prompt,
      items = vim.tbl_map(opts.format_item, items),
      refs = vim.tbl_map(function(s)
        return sessions.target(s).ref
      end, items),
    }
    on_choice(items[pick], pick)
  end
  pick = 2
  vim.cmd("PiEvents sessions")
  H.check(
    "the list opens the chosen session's first event",
    H.wait(function()
      return vim.startswith(vim.api.nvim_buf_get_name(0), "pi-event://read/")
    end, SLOW),
    { shown = shown, notes = H.result.notifications }
  )
  H.put("list", shown or vim.NIL)
  H.put("list_opened", vim.api.nvim_buf_get_name(0))

  shown, pick = nil, 1
  vim.cmd("enew")
  vim.cmd("PiEvents sessions zebrafish")
  H.check(
    "the grouped search opens the top hit",
    H.wait(function()
      return shown and vim.startswith(vim.api.nvim_buf_get_name(0), "pi-event://read/")
    end, SLOW),
    { shown = shown, notes = H.result.notifications }
  )
  H.put("grouped", shown or vim.NIL)
  H.put("grouped_opened", vim.api.nvim_buf_get_name(0))

  local before = #H.result.notifications
  vim.cmd("PiEvents sessions nosuchwordanywhere")
  H.wait(function()
    return #H.result.notifications > before
  end, SLOW)
  local note = H.result.notifications[before + 1]
  H.put("none_note", note and note.msg or vim.NIL)

  -- The finder of the telescope picker: an empty prompt lists, a typed prefix searches grouped.
  local finder = sessions.finder({ debounce = 0 }, c)
  local function run(prompt)
    local entries, done = {}, false
    finder(prompt, function(e)
      table.insert(entries, e)
    end, function()
      done = true
    end)
    H.check(
      "finder answered " .. prompt,
      H.wait(function()
        return done
      end, SLOW)
    )
    return entries
  end
  local function summary(entries)
    return vim.tbl_map(function(e)
      local line, hls = e:display()
      return {
        ref = e.ref,
        session = e.session.sessionId,
        display = line,
        groups = vim.tbl_map(function(h)
          return h[2]
        end, hls),
        matched = vim.tbl_map(
          function(h)
            return line:sub(h[1][1] + 1, h[1][2])
          end,
          vim.tbl_filter(function(h)
            return h[2] == "PiEventsMatch"
          end, hls)
        ),
      }
    end, entries)
  end
  H.put("finder_empty", summary(run("")))
  local typed = run("zebraf")
  H.put("finder_typed", summary(typed))
  -- (a prefix term gets no match ranges from the server: the highlights of the full word's rows)
  H.put("grouped_rows", summary(vim.tbl_map(sessions.make_entry, raw_grouped.sessions)))
  H.put("finder_requests", finder.requests)
  finder.close()

  -- The preview: the session's summary above the read view of its event.
  local view = require("pi_events.view")
  local function preview(entry)
    local buf = vim.api.nvim_create_buf(false, true)
    local done = false
    view.preview(buf, entry.ref, c, function()
      done = true
    end, entry.preview_head(entry))
    H.check(
      "preview of " .. entry.ref,
      H.wait(function()
        return done
      end, SLOW)
    )
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  H.put("preview", preview(typed[1]))
  local unnamed = vim.tbl_filter(function(e)
    return e.session.sessionId == F.b
  end, typed)[1]
  H.put("preview_unnamed", unnamed and preview(unnamed) or vim.NIL)
end)
