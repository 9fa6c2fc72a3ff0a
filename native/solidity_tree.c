// The Solidity syntax tree as one flat array: tree-sitter's C runtime parses a file and walks the
// tree once, writing a record per node, so that the JavaScript side builds its own AST from an
// Int32Array instead of asking a cursor for each property of each node (ADR 0100).
//
//   parse(source: string, language: External<TSLanguage>) → Int32Array
//     pre-order records of RECORD_SIZE fields: symbol, field id, start and end (UTF-16 code
//     units, as JavaScript strings count), index of the record after the node's subtree, and 1
//     when the node is one the parser inserted (missing), else 0.
//   parseAsync(source, language) → Promise<Int32Array>
//     the same, parsed on libuv's thread pool while JavaScript goes on.
//   symbols(language) → { types: string[], named: boolean[], fields: (string | null)[] }
//
// The grammar is the compiled `tree-sitter-solidity` package's own (its `language` export); this
// file links tree-sitter's runtime only.
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <tree_sitter/api.h>

#define RECORD_SIZE 6

static void free_records(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

static napi_value fail(napi_env env, const char *message) {
  napi_throw_error(env, "ERR_SOLIDITY_TREE", message);
  return NULL;
}

/** The language behind the `language` argument, or NULL with an exception pending. */
static const TSLanguage *language_of(napi_env env, napi_value value) {
  napi_valuetype type;
  void *pointer = NULL;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external ||
      napi_get_value_external(env, value, &pointer) != napi_ok || pointer == NULL) {
    napi_throw_type_error(env, "ERR_SOLIDITY_TREE", "language: a tree-sitter language expected");
    return NULL;
  }
  return pointer;
}

/** Why a grammar cannot be set. */
static const char *const ABI_ERROR = "the grammar's ABI version is not one this tree-sitter runtime reads";

/**
 * Each thread (a JavaScript thread for `parse`, a pool thread for `parseAsync`) keeps its own
 * parser: a TSParser is not shared between threads.
 */
static _Thread_local TSParser *thread_parser;
static _Thread_local const TSLanguage *thread_language;

/** This thread's parser, set to `language`; NULL when the grammar cannot be set. Makes no N-API call. */
static TSParser *thread_parser_for(const TSLanguage *language) {
  if (thread_parser == NULL) thread_parser = ts_parser_new();
  if (thread_language != language) {
    if (!ts_parser_set_language(thread_parser, language)) return NULL;
    thread_language = language;
  }
  return thread_parser;
}

/** The records of a parse, or why there are none. */
typedef struct {
  int32_t *records;
  size_t count;
  const char *error;
} Flat;

/** Parses `text` with `parser` and writes the tree's records. Makes no N-API call: runs on any thread. */
static Flat flatten(TSParser *parser, const char16_t *text, size_t length) {
  Flat out = {NULL, 0, NULL};
  TSTree *tree =
      ts_parser_parse_string_encoding(parser, NULL, (const char *)text, (uint32_t)(length * 2), TSInputEncodingUTF16LE);
  if (tree == NULL) {
    out.error = "tree-sitter returned no tree";
    return out;
  }
  size_t capacity = 1024, count = 0, depth = 0, depth_capacity = 64;
  int32_t *records = malloc(capacity * RECORD_SIZE * sizeof(int32_t));
  // The record indexes of the nodes whose subtree is being written, innermost last.
  size_t *open = malloc(depth_capacity * sizeof(size_t));
  TSTreeCursor cursor = ts_tree_cursor_new(ts_tree_root_node(tree));
  int ok = records != NULL && open != NULL;
  while (ok) {
    if (count == capacity) {
      int32_t *grown = realloc(records, capacity * 2 * RECORD_SIZE * sizeof(int32_t));
      if (grown == NULL) {
        ok = 0;
        break;
      }
      records = grown;
      capacity *= 2;
    }
    TSNode node = ts_tree_cursor_current_node(&cursor);
    int32_t *r = records + count * RECORD_SIZE;
    r[0] = ts_node_symbol(node);
    r[1] = ts_tree_cursor_current_field_id(&cursor);
    r[2] = (int32_t)(ts_node_start_byte(node) / 2);
    r[3] = (int32_t)(ts_node_end_byte(node) / 2);
    r[4] = (int32_t)(count + 1);
    r[5] = ts_node_is_missing(node) ? 1 : 0;
    count++;
    if (ts_tree_cursor_goto_first_child(&cursor)) {
      if (depth == depth_capacity) {
        size_t *grown = realloc(open, depth_capacity * 2 * sizeof(size_t));
        if (grown == NULL) {
          ok = 0;
          break;
        }
        open = grown;
        depth_capacity *= 2;
      }
      open[depth++] = count - 1;
      continue;
    }
    // A leaf: climb until a sibling follows, closing each subtree left behind.
    while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
      if (depth == 0 || !ts_tree_cursor_goto_parent(&cursor)) goto done;
      records[open[--depth] * RECORD_SIZE + 4] = (int32_t)count;
    }
  }
done:
  ts_tree_cursor_delete(&cursor);
  ts_tree_delete(tree);
  free(open);
  if (!ok) {
    free(records);
    out.error = "out of memory";
    return out;
  }
  out.records = records;
  out.count = count;
  return out;
}

/** The records as an Int32Array that owns them, or NULL with an exception pending. */
static napi_value records_array(napi_env env, Flat flat) {
  napi_value buffer, array;
  if (napi_create_external_arraybuffer(env, flat.records, flat.count * RECORD_SIZE * sizeof(int32_t), free_records,
                                       NULL, &buffer) != napi_ok) {
    free(flat.records);
    return fail(env, "cannot hand the tree to JavaScript");
  }
  if (napi_create_typedarray(env, napi_int32_array, flat.count * RECORD_SIZE, buffer, 0, &array) != napi_ok)
    return fail(env, "cannot hand the tree to JavaScript");
  return array;
}

/**
 * The arguments of `parse` and `parseAsync`: the source copied out as UTF-16 and the language,
 * or NULL text with an exception pending.
 */
static char16_t *read_arguments(napi_env env, napi_callback_info info, size_t *length, const TSLanguage **language) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) {
    fail(env, "parse(source, language): two arguments expected");
    return NULL;
  }
  napi_valuetype type;
  if (napi_typeof(env, argv[0], &type) != napi_ok || type != napi_string) {
    napi_throw_type_error(env, "ERR_SOLIDITY_TREE", "source: a string expected");
    return NULL;
  }
  *language = language_of(env, argv[1]);
  if (*language == NULL) return NULL;
  if (napi_get_value_string_utf16(env, argv[0], NULL, 0, length) != napi_ok) {
    fail(env, "source: unreadable");
    return NULL;
  }
  if (*length > UINT32_MAX / 2 - 1) {
    fail(env, "source: too large");
    return NULL;
  }
  char16_t *text = malloc((*length + 1) * sizeof(char16_t));
  if (text == NULL) {
    fail(env, "out of memory");
    return NULL;
  }
  napi_get_value_string_utf16(env, argv[0], text, *length + 1, length);
  return text;
}

static napi_value parse(napi_env env, napi_callback_info info) {
  size_t length = 0;
  const TSLanguage *language = NULL;
  char16_t *text = read_arguments(env, info, &length, &language);
  if (text == NULL) return NULL;
  TSParser *parser = thread_parser_for(language);
  if (parser == NULL) {
    free(text);
    return fail(env, ABI_ERROR);
  }
  Flat flat = flatten(parser, text, length);
  free(text);
  if (flat.error) return fail(env, flat.error);
  return records_array(env, flat);
}

/** A parse on libuv's thread pool: the source goes in copied, the records come out. */
typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  const TSLanguage *language;
  char16_t *text;
  size_t length;
  Flat flat;
} Job;

static void execute_job(napi_env env, void *data) {
  (void)env;
  Job *job = data;
  TSParser *parser = thread_parser_for(job->language);
  if (parser == NULL) {
    job->flat.error = ABI_ERROR;
    return;
  }
  job->flat = flatten(parser, job->text, job->length);
  free(job->text);
  job->text = NULL;
}

static void complete_job(napi_env env, napi_status status, void *data) {
  Job *job = data;
  if (status == napi_ok && job->flat.error == NULL) {
    napi_value array = records_array(env, job->flat);
    if (array != NULL) {
      napi_resolve_deferred(env, job->deferred, array);
    } else {
      napi_value exception;
      napi_get_and_clear_last_exception(env, &exception);
      napi_reject_deferred(env, job->deferred, exception);
    }
  } else {
    free(job->flat.records);
    napi_value message, error;
    napi_create_string_utf8(env, job->flat.error ? job->flat.error : "the parse was cancelled", NAPI_AUTO_LENGTH,
                            &message);
    napi_create_error(env, NULL, message, &error);
    napi_reject_deferred(env, job->deferred, error);
  }
  napi_delete_async_work(env, job->work);
  free(job->text);
  free(job);
}

static napi_value parse_async(napi_env env, napi_callback_info info) {
  size_t length = 0;
  const TSLanguage *language = NULL;
  char16_t *text = read_arguments(env, info, &length, &language);
  if (text == NULL) return NULL;
  Job *job = calloc(1, sizeof(Job));
  napi_value promise, name;
  if (job == NULL) {
    free(text);
    return fail(env, "out of memory");
  }
  job->language = language;
  job->text = text;
  job->length = length;
  napi_create_string_utf8(env, "solidity-tree.parse", NAPI_AUTO_LENGTH, &name);
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok ||
      napi_create_async_work(env, NULL, name, execute_job, complete_job, job, &job->work) != napi_ok ||
      napi_queue_async_work(env, job->work) != napi_ok) {
    free(text);
    free(job);
    return fail(env, "cannot start the parse");
  }
  return promise;
}

static napi_value symbols(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1)
    return fail(env, "symbols(language): one argument expected");
  const TSLanguage *language = language_of(env, argv[0]);
  if (language == NULL) return NULL;
  uint32_t symbol_count = ts_language_symbol_count(language);
  uint32_t field_count = ts_language_field_count(language);
  napi_value result, types, named, fields, value;
  napi_create_object(env, &result);
  napi_create_array_with_length(env, symbol_count, &types);
  napi_create_array_with_length(env, symbol_count, &named);
  for (uint32_t id = 0; id < symbol_count; id++) {
    const char *name = ts_language_symbol_name(language, (TSSymbol)id);
    napi_create_string_utf8(env, name ? name : "", NAPI_AUTO_LENGTH, &value);
    napi_set_element(env, types, id, value);
    napi_get_boolean(env, ts_language_symbol_type(language, (TSSymbol)id) == TSSymbolTypeRegular, &value);
    napi_set_element(env, named, id, value);
  }
  // Field ids start at 1; index 0 is no field.
  napi_create_array_with_length(env, field_count + 1, &fields);
  napi_get_null(env, &value);
  napi_set_element(env, fields, 0, value);
  for (uint32_t id = 1; id <= field_count; id++) {
    const char *name = ts_language_field_name_for_id(language, (TSFieldId)id);
    if (name)
      napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &value);
    else
      napi_get_null(env, &value);
    napi_set_element(env, fields, id, value);
  }
  napi_set_named_property(env, result, "types", types);
  napi_set_named_property(env, result, "named", named);
  napi_set_named_property(env, result, "fields", fields);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "parse", NAPI_AUTO_LENGTH, parse, NULL, &fn);
  napi_set_named_property(env, exports, "parse", fn);
  napi_create_function(env, "parseAsync", NAPI_AUTO_LENGTH, parse_async, NULL, &fn);
  napi_set_named_property(env, exports, "parseAsync", fn);
  napi_create_function(env, "symbols", NAPI_AUTO_LENGTH, symbols, NULL, &fn);
  napi_set_named_property(env, exports, "symbols", fn);
  return exports;
}
