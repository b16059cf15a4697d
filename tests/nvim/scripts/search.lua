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

  -- A query of two words left as typed: after `settle` ms `on_settle` names it; run again with
  -- `settle_next` set, the finder asks it settled (read for its meaning), at once.
  local rested = {}
  local settling
  settling = search.new_finder({
    client = c,
    debounce = 0,
    limit = 20,
    settle = 100,
    on_settle = function(prompt)
      table.insert(rested, prompt)
    end,
  })
  local typed = refs(find(settling, "zebrafish backo"))
  H.wait(function()
    return #rested > 0
  end, 3000)
  local one_word = search.new_finder({
    client = c,
    debounce = 0,
    limit = 20,
    settle = 100,
    on_settle = function(p)
      table.insert(rested, "one word: " .. p)
    end,
  })
  find(one_word, "zebrafish")
  vim.wait(300)
  settling.settle_next = "zebrafish backo"
  local sent = settling.requests
  local settled = refs(find(settling, "zebrafish backo"))
  local raw_settled = client.request_sync(
    "piEvents/search",
    { query = "zebrafish backo", limit = 20, prefixLast = true, settled = true },
    10000,
    c
  )
  vim.wait(300) -- no second settle after a settled answer
  H.put("settle", {
    typed = typed,
    rested = rested,
    settled = settled,
    raw_settled = vim.tbl_map(function(h)
      return h.ref
    end, raw_settled and raw_settled.hits or {}),
    requests = settling.requests - sent,
    settles = search.settles("a b") and not search.settles("a b ") and not search.settles("ab"),
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
