// A tool-using agent written against the openai npm package, as agents are: the only change
// for contextd is the base URL and the session header. It keeps its whole history, runs the
// tools the model asks for, and prints one JSON line of figures at the end.
//
//   node agent.mjs <contextd base URL> <turns> <stream: 0|1>
import OpenAI from "openai";

const [baseURL, turnsArg, streamArg] = process.argv.slice(2);
const turns = Number(turnsArg ?? 300);
const stream = streamArg === "1";
const client = new OpenAI({
  apiKey: "sk-fake-provider",
  baseURL,
  defaultHeaders: { "X-Contextd-Session": `node-${stream ? "stream" : "json"}` },
  maxRetries: 0,
});
const tools = [
  {
    type: "function",
    function: {
      name: "search",
      description: "Search the web.",
      parameters: { type: "object", properties: { query: { type: "string" } } },
    },
  },
];
const vocabulary = ["alpha", "delta", "echo", "golf", "hotel", "river", "stone", "cloud"];
const words = (count, seed) =>
  Array.from({ length: count }, (_, i) => vocabulary[(seed + i) % vocabulary.length]).join(" ");

const figures = { calls: 0, contextLengthErrors: 0, invalid: 0, audited: new Set() };

async function call(messages) {
  figures.calls += 1;
  const params = { model: "gpt-4", messages, tools, max_tokens: 1024 };
  if (!stream) {
    const { data, response } = await client.chat.completions.create(params).withResponse();
    figures.audited.add(response.headers.get("x-contextd-audit-id"));
    return data.choices[0].message;
  }
  const { data, response } = await client.chat.completions
    .create({ ...params, stream: true, stream_options: { include_usage: true } })
    .withResponse();
  figures.audited.add(response.headers.get("x-contextd-audit-id"));
  let content = "";
  const calls = [];
  for await (const chunk of data) {
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? "";
      for (const piece of choice.delta.tool_calls ?? []) {
        calls[piece.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
        if (piece.id) calls[piece.index].id = piece.id;
        calls[piece.index].function.name += piece.function?.name ?? "";
        calls[piece.index].function.arguments += piece.function?.arguments ?? "";
      }
    }
  }
  const message = { role: "assistant", content: content || null };
  if (calls.length) message.tool_calls = calls;
  return message;
}

const messages = [{ role: "system", content: "You are a research agent." }];
for (let turn = 0; turn < turns; turn += 1) {
  messages.push({ role: "user", content: `Question ${turn}: ${words(40, turn)}` });
  for (;;) {
    let message;
    try {
      message = await call(messages);
    } catch (error) {
      if (error instanceof OpenAI.BadRequestError && error.code === "context_length_exceeded") {
        figures.contextLengthErrors += 1;
      } else if (error instanceof OpenAI.APIError && error.status < 500) {
        figures.invalid += 1;
      } else {
        throw error;
      }
      messages.pop();
      break;
    }
    messages.push(message);
    if (!message.tool_calls?.length) break;
    for (const toolCall of message.tool_calls) {
      messages.push({
        role: "tool",
        tool_call_id: toolCall.id,
        content: `result for ${toolCall.id}: ${words(250, turn)}`,
      });
    }
  }
}
figures.audited.delete(null);
console.log(JSON.stringify({ ...figures, audited: figures.audited.size }));
