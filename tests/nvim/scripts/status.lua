-- :PiEvents status and :PiEvents reindex.
local H = dofile(arg[1])
H.load_plugins()

H.run(function()
  H.setup()
  H.reindex(H.client())
  vim.cmd("PiEvents status")
  H.check("status view shown", H.wait(function()
    return vim.api.nvim_buf_get_name(0):match("pi%-event://status$")
  end), H.result.notifications)
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
