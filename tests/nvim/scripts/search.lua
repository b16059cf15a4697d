-- The plain finder (what the telescope picker wraps) against the real server: results and their
-- order, prefix search, highlights of the server's match ranges, cancellation of stale prompts,
-- the previewer function, and authorization (another project's session never shows up).
local H = dofile(arg[1])
H.load_plugins()

---@param finder table
---@param prompt string
---@return table[] entries
local function find(finder, prompt)
  local got, done = {}, false
  finder(prompt, function(e)
    table.insert(got, e)
  end, function()
    done = true
  end)
  H.check(
    "finder completes: " .. prompt,
    H.wait(function()
      return done
    end)
  )
  return got
end

---@param entries table[]
local function refs(entries)
  return vim.tbl_map(function(e)
    return e.ref
  end, entries)
end

H.run(function()
  H.setup()
  local c = H.client()
  H.reindex(c)
  local client = require("pi_events.client")
  local search = require("pi_events.search")
  local finder = search.new_finder({ client = c, debounce = 0, limit = 20 })

  local zebra = find(finder, "zebrafish")
  H.put("zebrafish", refs(zebra))
  local raw = client.request_sync("piEvents/search", { query = "zebrafish", limit = 20 }, 10000, c)
  H.put(
    "raw_zebrafish",
    vim.tbl_map(function(h)
      return h.ref
    end, raw and raw.hits or {})
  )
  H.put("prefix", refs(find(finder, "zebraf")))
  H.put("empty", #find(finder, ""))

  -- Display lines: every highlighted match is the searched word, whatever the multibyte text.
  local shown = {}
  for _, e in ipairs(find(finder, "websocket")) do
    local text, hls = e.display(e)
    local matched = {}
    for _, h in ipairs(hls) do
      if h[2] == "PiEventsMatch" then
        table.insert(matched, text:sub(h[1][1] + 1, h[1][2]))
      end
    end
    table.insert(shown, {
      ref = e.ref,
      text = text,
      matched = matched,
      lnum = e.lnum,
      filename = e.filename,
    })
  end
  H.put("websocket", shown)

  -- A word most events lack: the event holding both comes first, the rest are marked partial.
  local partial = {}
  for _, e in ipairs(find(finder, "zebrafish backoff")) do
    local text, hls = e.display(e)
    local marks = {}
    for _, h in ipairs(hls) do
      if h[2] == "PiEventsPartial" then
        table.insert(marks, text:sub(h[1][1] + 1, h[1][2]))
      end
    end
    table.insert(partial, { ref = e.ref, marks = marks })
  end
  H.put("partial", partial)

  -- Three prompts in a row: the first two requests are cancelled, only the last is delivered.
  local slow = search.new_finder({ client = c, debounce = 0, limit = 20 })
  local delivered, done = {}, 0
  for _, p in ipairs({ "web", "webs", "zebrafish" }) do
    slow(p, function(e)
      table.insert(delivered, p .. " " .. e.ref)
    end, function()
      done = done + 1
    end)
  end
  H.wait(function()
    return done >= 1
  end)
  vim.wait(300)
  H.put("stale", {
    delivered = delivered,
    done = done,
    requests = slow.requests,
    cancelled = slow.cancelled,
  })

  -- The previewer's plain function: fills a buffer with the read view of an entry.
  local buf = vim.api.nvim_create_buf(false, true)
  local filled = false
  require("pi_events.view").preview(buf, zebra[1].ref, c, function()
    filled = true
  end)
  H.check(
    "preview filled",
    H.wait(function()
      return filled
    end)
  )
  H.put("preview", vim.api.nvim_buf_get_lines(buf, 0, -1, false))
end)
