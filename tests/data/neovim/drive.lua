-- Run by tests/test_editor_neovim.py after the init.lua taken from docs/lsp.md, with the config
-- open in the current buffer. It waits for the server's diagnostics, picks a code action through
-- vim.lsp.buf.code_action() as a user would in the vim.ui.select menu, waits for the diagnostics
-- of the edited buffer, and writes everything it saw as JSON to $TRAINSPEC_NVIM_OUT. Neovim exits
-- whatever happens. With $TRAINSPEC_NVIM_OTHER set, it then opens that file too (one that is no
-- training config) and records the servers attached to it and the diagnostics it gets.
local out_path = assert(os.getenv("TRAINSPEC_NVIM_OUT"), "TRAINSPEC_NVIM_OUT is not set")
local action_title = assert(os.getenv("TRAINSPEC_NVIM_ACTION"), "TRAINSPEC_NVIM_ACTION is not set")
local timeout_ms = tonumber(os.getenv("TRAINSPEC_NVIM_TIMEOUT_MS") or "30000")
local bufnr = vim.api.nvim_get_current_buf()
local result = { filetype = vim.bo[bufnr].filetype }

local function attached_clients()
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
end

local function diagnostics()
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(found, {
      line = d.lnum,
      col = d.col,
      code = d.code,
      severity = d.severity,
      source = d.source,
      message = d.message,
    })
  end
  return found
end

local function has_code(code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code == code then
      return d
    end
  end
end

local function run()
  local v = vim.version()
  result.nvim = string.format("%d.%d.%d", v.major, v.minor, v.patch)

  result.attached = vim.wait(timeout_ms, function()
    return #attached_clients() > 0
  end, 20)
  result.clients = {}
  for _, client in ipairs(attached_clients()) do
    table.insert(result.clients, client.name)
  end
  if not result.attached then
    return
  end

  vim.wait(timeout_ms, function()
    return #vim.diagnostic.get(bufnr) > 0
  end, 20)
  result.published = diagnostics()

  local typo = has_code("unknown-key")
  if not typo then
    return
  end
  vim.api.nvim_win_set_cursor(0, { typo.lnum + 1, typo.col })
  result.offered = nil
  vim.ui.select = function(items, opts, on_choice)
    result.offered = {}
    local chosen
    for _, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(result.offered, title)
      if title == action_title then
        chosen = item
      end
    end
    on_choice(chosen)
  end
  vim.lsp.buf.code_action()
  vim.wait(timeout_ms, function()
    return result.offered ~= nil
  end, 20)

  result.fixed = vim.wait(timeout_ms, function()
    return not has_code("unknown-key")
  end, 20)
  result.lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  result.after = diagnostics()
end

local function other(path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  bufnr = vim.api.nvim_get_current_buf()
  local seen = { filetype = vim.bo[bufnr].filetype, clients = {} }
  result.other = seen
  vim.wait(timeout_ms, function()
    return #attached_clients() > 0
  end, 20)
  for _, client in ipairs(attached_clients()) do
    table.insert(seen.clients, client.name)
  end
  -- a request answered proves the server has the buffer; then give it time to publish, if it would
  local params = { textDocument = vim.lsp.util.make_text_document_params() }
  local answers = vim.lsp.buf_request_sync(bufnr, "textDocument/documentSymbol", params, timeout_ms) or {}
  seen.answered = next(answers) ~= nil
  vim.wait(1000)
  seen.published = diagnostics()
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  result.error = err
end
local other_path = os.getenv("TRAINSPEC_NVIM_OTHER")
if ok and other_path then
  ok, err = xpcall(other, debug.traceback, other_path)
  if not ok then
    result.error = err
  end
end
local file = assert(io.open(out_path, "w"))
file:write(vim.fn.json_encode(result))
file:close()
vim.cmd("qa!")
