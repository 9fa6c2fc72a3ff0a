# The native Solidity tree (solidity_tree.c) with tree-sitter's C runtime, from the sources the
# `tree-sitter` package ships. Built by scripts/build.mjs (ADR 0100).
{
  "variables": {
    # Relative to this folder, as gyp wants sources.
    "tree_sitter%": "<!(node -p \"require('node:path').relative(process.cwd(), require('node:path').dirname(require.resolve('tree-sitter/package.json')))\")/vendor/tree-sitter/lib",
  },
  "targets": [
    {
      "target_name": "solidity_tree",
      "sources": ["solidity_tree.c", "<(tree_sitter)/src/lib.c"],
      "include_dirs": ["<(tree_sitter)/include", "<(tree_sitter)/src"],
      "defines": ["_POSIX_C_SOURCE=200112L", "_DEFAULT_SOURCE", "NAPI_VERSION=8"],
      "cflags_c": ["-std=c11", "-fvisibility=hidden"],
      "xcode_settings": {"GCC_SYMBOLS_PRIVATE_EXTERN": "YES"},
      "msvs_settings": {"VCCLCompilerTool": {"AdditionalOptions": ["/std:c11"]}},
    }
  ],
}
