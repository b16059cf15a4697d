-- :PiEvents status (also right after setup, before the server finished initializing) and
-- :PiEvents reindex.
local H = dofile(arg[1])
H.load_plugins()

local function show_status()
  vim.cmd("enew")
  vim.cmd("PiEvents status")
  return H.wait(function()
    return vim.api.nvim_buf_get_name(0):match("pi%-event://status$")
  end)
end

H.run(function()
  H.setup()
  -- No waiting for the client: the request is held until the server is initialized.
  H.check("status view shown at once", show_status(), H.result.notifications)
  H.put("early_notifications", H.result.notifications)
  H.reindex(H.client())
  H.check("status view shown", show_status(), H.result.notifications)
  H.put("status", H.buffer())
  H.result.notifications = {}
  local done
  require("pi_events").reindex(function(r)
    done = r
  end)
  H.check(
    "reindex done",
    H.wait(function()
      return done
    end),
    H.result.notifications
  )
  H.put("reindex", done or vim.NIL)
  H.put("notifications", H.result.notifications)

  -- :PiEvents restart: a new client for the same root, reattached to the file buffers
  vim.cmd.edit(H.case.facts.notes)
  local old = H.client()
  H.wait(function()
    return vim.lsp.buf_is_attached(0, old.id)
  end)
  vim.cmd("PiEvents restart")
  local new = H.client()
  H.put("restart", {
    changed = new.id ~= old.id,
    attached = vim.lsp.buf_is_attached(0, new.id),
    clients = #vim.lsp.get_clients({ name = "pi_event_search" }),
  })
end)
