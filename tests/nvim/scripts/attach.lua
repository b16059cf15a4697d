-- setup() starts one server for the workspace (Git root) and attaches it to every file buffer,
-- notes included; a second buffer of the same root reuses the client.
local H = dofile(arg[1])
H.load_plugins()

H.run(function()
  local F = H.case.facts
  -- A fresh index through the index_path option: the server indexes and notifies.
  local changed = {}
  vim.api.nvim_create_autocmd("User", {
    pattern = "PiEventsIndexChanged",
    callback = function(ev)
      table.insert(changed, ev.data)
    end,
  })
  local index = vim.fn.tempname() .. ".sqlite3"
  H.setup({ index_path = index, session_dirs = { F.archive } })
  H.put("index_path", index)
  local client = require("pi_events.client")
  -- Asking again while the server is still starting reuses it.
  local first = client.current()
  local second = client.current()
  H.put("starting_reused", first ~= nil and second ~= nil and first.id == second.id and not first.initialized)
  local c = H.client()
  H.put("root_dir", c.config.root_dir)
  H.put("init_options", c.config.init_options)
  H.put("workspace_folders", c.workspace_folders)
  H.put("server_name", (c.server_info or {}).name or vim.NIL)

  vim.cmd.edit(F.notes)
  local notes = vim.api.nvim_get_current_buf()
  H.check(
    "notes buffer attached",
    H.wait(function()
      return vim.lsp.buf_is_attached(notes, c.id)
    end),
    vim.tbl_map(function(x)
      return x.name
    end, vim.lsp.get_clients())
  )
  H.put("notes_filetype", vim.bo.filetype)
  H.put("notes_root", client.root(notes))

  vim.cmd.edit(F.proj .. "/notes/other.txt")
  local other = vim.api.nvim_get_current_buf()
  H.check(
    "new file buffer attached",
    H.wait(function()
      return vim.lsp.buf_is_attached(other, c.id)
    end)
  )
  H.put("clients", #vim.lsp.get_clients({ name = client.name }))

  -- Scratch and nofile buffers are left alone.
  vim.cmd("enew")
  vim.bo.buftype = "nofile"
  H.put("nofile_attached", #vim.lsp.get_clients({ bufnr = 0 }) > 0)

  -- Server answers through the plugin's request helper.
  local status, err = client.request_sync("piEvents/status", {}, 10000, c)
  H.check("status answered", status ~= nil, err)
  H.put("status_roots", status and status.roots or vim.NIL)
  H.put("status_index", status and status.index.path or vim.NIL)
  H.check(
    "indexChanged arrives",
    H.wait(function()
      return #changed > 0 and changed[#changed].indexing == false
    end, 15000),
    changed
  )
  H.put("index_changed", changed[#changed] or vim.NIL)
  H.put("client_state", client.state[c.id] or vim.NIL)
  H.put("status_dirs", status and status.sessionDirs or vim.NIL)
  local archived = client.request_sync("piEvents/search", { query = "quokka" }, 10000, c)
  H.put(
    "archived",
    vim.tbl_map(function(h)
      return h.ref
    end, archived and archived.hits or {})
  )

  -- Options that narrow attaching: filetypes, max_filesize.
  H.setup({
    index_path = index,
    session_dirs = { F.archive },
    filetypes = { "markdown" },
    max_filesize = 200,
  })
  vim.cmd.edit(F.proj .. "/notes/plain.txt")
  vim.cmd.edit(F.proj .. "/notes/big.md")
  vim.cmd.edit(F.proj .. "/notes/small.md")
  vim.wait(300)
  local attached = {}
  for _, name in ipairs({ "plain.txt", "big.md", "small.md" }) do
    local buf = vim.fn.bufnr(F.proj .. "/notes/" .. name)
    attached[name] = #vim.lsp.get_clients({ bufnr = buf, name = client.name }) > 0
  end
  H.put("narrowed", attached)

  -- A root override: a subdirectory of the sessions' cwd sees none of them.
  for _, x in ipairs(vim.lsp.get_clients()) do
    client.call(x, "stop")
  end
  H.wait(function()
    return #vim.lsp.get_clients() == 0
  end)
  H.setup({ index_path = index, root = F.proj .. "/notes" })
  local sub = H.client()
  local sub_status = client.request_sync("piEvents/status", {}, 10000, sub)
  H.put(
    "override",
    { root_dir = sub.config.root_dir, sessions = sub_status and sub_status.sessions or vim.NIL }
  )
  H.put("notifications", H.result.notifications)
end)
