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
  H.check("reindex done", H.wait(function()
    return done
  end), H.result.notifications)
  H.put("reindex", done or vim.NIL)
  H.put("notifications", H.result.notifications)
end)
