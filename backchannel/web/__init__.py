"""Where people already work: the local web app (`backchannel web`, or the daemon with
`[web] enabled`) and the MCP server (`backchannel mcp`).

Neither touches the store itself. Every page, form and tool calls an operation
(backchannel.ops) through `bridge`: on the daemon's consumer when the daemon serves
it, else the way the CLI does (through the running daemon's API, or in-process on the
store for that one call). Modules import lazily; nothing here loads at CLI start.
"""
