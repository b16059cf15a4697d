-- Pure Lua parts, no server, no telescope: config validation, references, the finder (against a
-- fake client: debounce and cancellation), the entry maker and its match highlights, rendering.
local H = dofile(arg[1])
H.load_plugins()

H.run(function()
  local config = require("pi_events.config")
  local ref = require("pi_events.ref")
  local search = require("pi_events.search")
  local render = require("pi_events.render")
  local view = require("pi_events.view")

  -- config -------------------------------------------------------------------------------
  local ok, errs = config.validate({ cmd = {}, limit = 500, bogus = 1, keymaps = { picker = { read = 3 } } })
  H.put("config_errors", errs)
  H.check("config rejects bad options", not ok and #errs == 4, errs)
  H.check("config accepts good options", (config.validate({
    cmd = { "x", "serve" },
    session_dirs = { "/a" },
    index_path = "/tmp/i.sqlite3",
    root = function() end,
    keymaps = { definition = false },
  })))
  H.put("extractor_errors", select(2, config.validate({ extractors = { "todo-state" } })))
  config.set({
    limit = 7,
    session_dirs = { "/arch" },
    index_path = "/tmp/ix.sqlite3",
    extractors = { { customType = "todo-state", fields = { "title", "items.*.text" }, label = "Todos" } },
  })
  H.check("config merges", config.options.limit == 7 and config.options.debounce == config.defaults.debounce)
  H.put("init_options", config.init_options("/w"))
  config.set({ limit = "x" })
  H.check(
    "invalid config keeps defaults and notifies",
    config.options.limit == config.defaults.limit and #H.result.notifications == 1
  )
  H.result.notifications = {}
  -- vim.g.pi_events applies without setup()
  vim.g.pi_events = { limit = 9, keymaps = { definition = false } }
  package.loaded["pi_events.config"] = nil
  local fresh = require("pi_events.config")
  H.check(
    "vim.g.pi_events applies at load",
    fresh.options.limit == 9
      and fresh.options.keymaps.definition == false
      and fresh.options.keymaps.picker.read == "<C-o>",
    fresh.options
  )
  vim.g.pi_events = nil
  package.loaded["pi_events.config"] = config

  -- references -----------------------------------------------------------------------------
  local line = "see pi-event:019f-aa.b/5e6f7081#tool.result:0. and pi-event:S1/v1~3, done"
  local all = ref.find_all(line)
  H.put(
    "refs",
    vim.tbl_map(function(r)
      return { ref.format(r.ref), r.col, r.end_col }
    end, all)
  )
  H.put("ref_at", ref.at(line, 60) and ref.at(line, 60).ref or vim.NIL)
  H.put("ref_none", ref.at(line, 1) == nil)
  H.put("parse_bad", ref.parse("pi-event:/x") == nil and ref.parse("pi-event:a/b c") == nil)

  -- the shared vectors (columns in code points there, in bytes here) ----------------------------
  local path = vim.fs.normalize(H.case.plugin_dir .. "/../../tests/data/ref-vectors.json")
  local vectors = vim.json.decode(table.concat(vim.fn.readfile(path, "b"), "\n")).vectors
  local mismatches = {}
  for _, v in ipairs(vectors) do
    local lines = vim.split(v.text, "\r?\n")
    local found, want = {}, {}
    for n, text in ipairs(lines) do
      for _, hit in ipairs(ref.find_all(text)) do
        local r = hit.ref
        table.insert(found, { n - 1, hit.col, hit.end_col, r.session_id, r.entry_id, r.fragment_id or "" })
      end
    end
    for _, r in ipairs(v.refs) do
      local text = lines[r.line + 1]
      local col, end_col = vim.fn.byteidx(text, r.start), vim.fn.byteidx(text, r["end"])
      table.insert(want, { r.line, col, end_col, r.sessionId, r.entryId, r.fragmentId or "" })
    end
    if not vim.deep_equal(found, want) then
      table.insert(mismatches, { name = v.name, found = found, want = want })
    end
  end
  H.put("vectors", #vectors)
  local whole = vim.json.decode(table.concat(vim.fn.readfile(path, "b"), "\n")).whole
  for _, w in ipairs(whole) do
    local got = ref.parse(w.text)
    local want = w.ref ~= vim.NIL and w.ref or nil
    local same = (got == nil and want == nil)
      or (
        got ~= nil
        and want ~= nil
        and got.session_id == want.sessionId
        and got.entry_id == want.entryId
        and got.fragment_id == want.fragmentId
      )
    if not same then
      table.insert(mismatches, { text = w.text, got = got or vim.NIL, want = w.ref })
    end
  end
  H.put("whole", #whole)
  H.check("shared reference vectors", #mismatches == 0, mismatches)

  -- the shared control-byte vectors ---------------------------------------------------------------
  local cpath = vim.fs.normalize(H.case.plugin_dir .. "/../../tests/data/control-vectors.json")
  local cases = vim.json.decode(table.concat(vim.fn.readfile(cpath, "b"), "\n")).cases
  local strip = require("pi_events.untrusted").strip
  local wrong = {}
  for _, c in ipairs(cases) do
    local got = strip(c["in"])
    if got ~= c.out then
      table.insert(wrong, { name = c.name, got = vim.inspect(got), want = vim.inspect(c.out) })
    end
  end
  H.put("control_vectors", #cases)
  H.check("shared control-byte vectors", #wrong == 0, wrong)

  -- entry maker and highlights: code point offsets into a multibyte snippet --------------------
  local hit = {
    ref = "pi-event:S/E",
    sessionId = "S0123456789",
    entryId = "E",
    kind = "tool.result",
    toolName = "bash",
    isError = true,
    timestamp = "2026-05-01T10:00:09.020Z",
    snippet = "é… ENOENT ünïcode",
    matches = { { 3, 9 }, { 10, 17 } },
    sessionName = "fix the build",
    source = { path = "/s.jsonl", line = 6 },
  }
  local entry = search.make_entry(hit)
  local text, hls = entry.display(entry)
  local pieces = {}
  for _, h in ipairs(hls) do
    table.insert(pieces, { text:sub(h[1][1] + 1, h[1][2]), h[2] })
  end
  H.put("display", text)
  H.put("display_pieces", pieces)
  H.put("entry", { ref = entry.ref, filename = entry.filename, lnum = entry.lnum })
  -- a partial hit (it lacks "bug") says so between the kind and the snippet
  hit.matched, hit.missing = { "enoent" }, { "bug" }
  local partial_text, partial_hls = search.display(hit)
  local partial_pieces = {}
  for _, h in ipairs(partial_hls) do
    table.insert(partial_pieces, { partial_text:sub(h[1][1] + 1, h[1][2]), h[2] })
  end
  H.put("partial_display", partial_text)
  H.put("partial_pieces", partial_pieces)
  hit.matched, hit.missing = nil, nil
  H.check("bad hit gives no entry", search.make_entry({}) == nil)

  -- finder against a fake client ---------------------------------------------------------------
  local sent, cancelled, handlers = {}, {}, {}
  local fake = {
    initialized = true,
    request = function(_, method, params, handler)
      table.insert(sent, { method = method, params = params })
      handlers[#sent] = handler
      return true, #sent
    end,
    cancel_request = function(_, id)
      table.insert(cancelled, id)
    end,
  }
  if vim.fn.has("nvim-0.11") ~= 1 then
    local r, c = fake.request, fake.cancel_request
    fake.request = function(...)
      return r(fake, ...)
    end
    fake.cancel_request = function(...)
      return c(fake, ...)
    end
  end
  local finder = search.new_finder({ client = fake, debounce = 30, limit = 5 })
  local got, completed = {}, 0
  local function on_entry(e)
    table.insert(got, e.ref)
  end
  local function on_done()
    completed = completed + 1
  end
  finder("w", on_entry, on_done)
  finder("we", on_entry, on_done)
  finder("web", on_entry, on_done)
  H.wait(function()
    return #sent == 1
  end, 1000)
  vim.wait(100)
  H.put(
    "debounced_requests",
    vim.tbl_map(function(s)
      return s.params
    end, sent)
  )
  -- a keystroke while the request is in flight cancels it
  finder("webs", on_entry, on_done)
  H.check("in-flight request cancelled", #cancelled == 1 and cancelled[1] == 1, cancelled)
  handlers[1](nil, { hits = { hit } }) -- late answer of a cancelled request: ignored
  H.wait(function()
    return #sent == 2
  end, 1000)
  handlers[2](nil, { hits = { hit, vim.tbl_extend("force", hit, { ref = "pi-event:S/F" }) } })
  H.put("finder_got", got)
  H.put("finder_completed", completed)
  H.put("finder_counts", { requests = finder.requests, cancelled = finder.cancelled })
  finder("x", on_entry, on_done)
  finder.close()
  vim.wait(80)
  H.check("close stops the pending timer", #sent == 2, #sent)
  -- errors go to on_error, cancellations included
  local errors = {}
  local f2 = search.new_finder({
    client = fake,
    debounce = 0,
    on_error = function(e)
      table.insert(errors, e.code)
    end,
  })
  f2("q", on_entry, on_done)
  handlers[#sent]({ code = -32003, message = "Query too long: 5000" }, nil)
  H.put("finder_errors", errors)

  -- requests wait for a starting server
  fake.initialized = false
  local n0 = #sent
  require("pi_events.client").request("piEvents/status", {}, function() end, fake)
  vim.wait(100)
  local held = #sent == n0
  fake.initialized = true
  H.check("request held until initialized, then sent", held and H.wait(function()
    return #sent == n0 + 1 and sent[#sent].method == "piEvents/status"
  end, 1000), { held = held, sent = #sent - n0 })

  -- rendering -----------------------------------------------------------------------------------
  local read = render.read({
    event = {
      ref = "pi-event:S/E",
      sessionId = "S",
      entryId = "E",
      entryType = "message",
      role = "toolResult",
      toolName = "bash",
      kinds = { "tool.result" },
      timestamp = "t",
      isError = true,
      cwd = "/w",
      sessionName = vim.NIL,
      branchState = "selected",
      contextRole = "conversation",
      selectionState = "direct",
      parentId = "D",
    },
    source = { path = "/s.jsonl", line = 6 },
    fragments = {
      {
        fragmentId = "tool.result:0",
        kind = "tool.result",
        text = "line1\nline2",
        offset = 0,
        length = 11,
        totalLength = 11,
        truncated = false,
      },
    },
    omitted = { { field = "message.content[1]", reason = "image", mimeType = "image/png", bytes = 5 } },
    neighbours = {
      order = "branch",
      before = {
        {
          ref = "pi-event:S/D",
          kind = "tool.call",
          timestamp = "2026-05-01T10:00:08.000Z",
          preview = "npm test",
        },
      },
      after = { { masked = true } },
      alternatives = {},
      stoppedAtFork = false,
    },
  })
  H.put("read_lines", read.lines)
  local trace = render.trace({
    event = { ref = "pi-event:S/E", kind = "tool.result", preview = "boom" },
    parent = { ref = "pi-event:S/D", kind = "tool.call", preview = "npm test" },
    children = {},
    siblings = {},
    towardLeaf = "child",
    towardLeafRef = "pi-event:S/F",
    relations = {
      {
        type = "tool-result-for",
        direction = "out",
        label = "recorded",
        node = { ref = "pi-event:S/D", kind = "tool.call", preview = "npm test" },
      },
    },
    files = { { op = "read", path = "/w/src/ws.ts", label = "derived" } },
    lineage = { { relation = "session-parent", masked = true } },
    labels = { "start" },
  })
  H.put("trace_lines", trace.lines)
  local buf = vim.api.nvim_create_buf(false, true)
  view.fill(buf, read)
  local marks = vim.api.nvim_buf_get_extmarks(buf, view.ns, 0, -1, { details = true })
  H.check(
    "fill sets lines and highlights",
    #vim.api.nvim_buf_get_lines(buf, 0, -1, false) == #read.lines and #marks == #read.highlights,
    { #marks, #read.highlights }
  )

  -- :help: the doc file builds tags without errors (in a copy: never write doc/tags in the repo)
  local docdir = vim.fn.tempname()
  vim.fn.mkdir(docdir, "p")
  vim.fn.writefile(vim.fn.readfile(H.case.plugin_dir .. "/doc/pi_events.txt"), docdir .. "/pi_events.txt")
  local ok_tags, tag_err = pcall(vim.cmd, "helptags " .. vim.fn.fnameescape(docdir))
  H.check("helptags", ok_tags, tag_err)
  H.put(
    "help_tags",
    vim.tbl_map(function(l)
      return vim.split(l, "\t")[1]
    end, vim.fn.readfile(docdir .. "/tags"))
  )

  -- every module compiles; all but the telescope extension load without telescope
  local compiled, loaded = {}, {}
  for _, file in ipairs(vim.fn.globpath(H.case.plugin_dir, "**/*.lua", false, true)) do
    local chunk, err = loadfile(file)
    compiled[file:sub(#H.case.plugin_dir + 2)] = chunk ~= nil or err
  end
  for _, mod in ipairs({
    "pi_events",
    "pi_events.client",
    "pi_events.select",
    "pi_events.picker",
    "pi_events.health",
    "pi_events.server",
    "pi_events.install",
  }) do
    local ok_mod, err = pcall(require, mod)
    loaded[mod] = ok_mod or err
  end
  H.put("compiled", compiled)
  H.put("loaded", loaded)

  -- server discovery and versions (no server involved: a missing cmd, the checkout, comparisons)
  local server = require("pi_events.server")
  local cfg = vim.tbl_extend(
    "force",
    require("pi_events.config").options,
    { cmd = { "/nonexistent/pi-event-search", "serve" } }
  )
  local found, why = server.resolve(cfg)
  H.put("resolve_missing_cmd", { found = found or vim.NIL, why = why })
  H.put("checkout", server.checkout() or vim.NIL)
  H.put("older", {
    server.older("0.1.0", "0.2.0"),
    server.older("0.2.0", "0.1.0"),
    server.older("0.1.0", "0.1.0"),
    server.older("3.9", "3.11"),
    server.older(nil, "1.0"),
  })
  local co = server.checkout()
  local installed =
    { cmd = { "/v/pi-event-search", "serve" }, path = "/v/pi-event-search", how = "installed" }
  H.put("update_hints", {
    installed_old = server.update_hint(installed, "0.0.1") or vim.NIL,
    installed_same = server.update_hint(installed, co and co.version) or vim.NIL,
    path_old = server.update_hint(vim.tbl_extend("force", installed, { how = "path" }), "0.0.1") or vim.NIL,
    cmd_old = server.update_hint(vim.tbl_extend("force", installed, { how = "cmd" }), "0.0.1") or vim.NIL,
  })

  -- :PiEvents completion
  H.put("completion", vim.fn.getcompletion("PiEvents ", "cmdline"))

  -- the Python that runs the installer, per platform (stand-in interpreters)
  local install = require("pi_events.install")
  local function on_path(names)
    return function(name)
      return names[name] or ""
    end
  end
  H.check(
    "windows: the py launcher when no python3",
    install.interpreter("python3", "win32", on_path({ py = "C:/py.exe" })) == "py"
  )
  H.check(
    "windows: python when no py",
    install.interpreter("python3", "win32", on_path({ python = "C:/p.exe" })) == "python"
  )
  H.check(
    "linux: only python3",
    install.interpreter("python3", "linux", on_path({ python = "/usr/bin/python" })) == nil
  )
  H.check(
    "a configured python first",
    install.interpreter("/opt/py", "win32", on_path({ ["/opt/py"] = "/opt/py", py = "x" })) == "/opt/py"
  )
  H.check(
    "macOS says brew",
    install.no_python("python3", "darwin"):find("brew install python@3.13", 1, true) ~= nil
  )
  H.check("windows says winget", install.no_python("python3", "win32"):find("winget install", 1, true) ~= nil)
  H.check("linux says apt", install.no_python("python3", "linux"):find("apt install python3", 1, true) ~= nil)
end)
