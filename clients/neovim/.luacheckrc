-- luacheck (run by ./scripts/test): Neovim's LuaJIT with the `vim` global.
std = "luajit"
globals = { "vim" } -- options and variables are set through its fields (vim.bo, vim.g ...)
max_line_length = 110 -- as .stylua.toml's column_width
