"""Pegasus inside assistants: the MCP server and the Claude Code hooks. The opencode
plugin is TypeScript and lives in ``integrations/opencode`` at the repository's top."""
