// pi-agent-core's side of loop_overhead.py: the same shapes through its agent loop.
//
// A scripted stream function plays the same turns as the workbench's scripted
// provider at full speed: one `start`, per call a `toolcall_start`, the argument
// string in 6-character `toolcall_delta`s (parsed as it grows, as pi-ai's OpenAI
// provider does) and a `toolcall_end`, then `done` with a usage estimate; the last
// turn says "done". One no-op tool with an empty object schema. The event sink
// does nothing; `convertToLlm` keeps the LLM roles, as pi's Agent does.
//
//   node loop_overhead_pi.mjs PI_AGENT_CORE_DIR TURNS CALLS REPEATS
//
// prints one JSON line: {"wall_us": [...], "cpu_us": [...]} per call, one entry a run
// (after two warm-up runs).

import { pathToFileURL } from "node:url";
import path from "node:path";

const [root, turnsArg, callsArg, repeatsArg] = process.argv.slice(2);
const modules = path.join(root, "node_modules", "@earendil-works");
const core = await import(pathToFileURL(path.join(modules, "pi-agent-core", "dist", "index.js")));
const ai = await import(pathToFileURL(path.join(modules, "pi-ai", "dist", "index.js")));
const { runAgentLoop } = core;
const { createAssistantMessageEventStream, parseStreamingJson, Type } = ai;

const turns = Number(turnsArg);
const calls = Number(callsArg);
const repeats = Number(repeatsArg);
const CHUNK = 6;

const model = { id: "scripted", name: "scripted", api: "scripted", provider: "scripted" };

const noop = {
    name: "noop",
    label: "No-op",
    description: "Does nothing.",
    parameters: Type.Object({}),
    execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

function scriptedStreamFn() {
    let played = 0;
    return (_model, context) => {
        const stream = createAssistantMessageEventStream();
        const turn = played++;
        const output = {
            role: "assistant",
            content: [],
            api: model.api,
            provider: model.provider,
            model: model.id,
            usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
            stopReason: "stop",
            timestamp: Date.now(),
        };
        queueMicrotask(() => {
            stream.push({ type: "start", partial: output });
            if (turn < turns) {
                for (let i = 0; i < calls; i++) {
                    const block = {
                        type: "toolCall",
                        id: `call_${turn + 1}_${i + 1}`,
                        name: "noop",
                        arguments: {},
                        partialArgs: "",
                    };
                    output.content.push(block);
                    const index = output.content.length - 1;
                    stream.push({ type: "toolcall_start", contentIndex: index, partial: output });
                    const raw = JSON.stringify({});
                    for (let at = 0; at < raw.length; at += CHUNK) {
                        const delta = raw.slice(at, at + CHUNK);
                        block.partialArgs += delta;
                        block.arguments = parseStreamingJson(block.partialArgs);
                        stream.push({ type: "toolcall_delta", contentIndex: index, delta, partial: output });
                    }
                    block.arguments = parseStreamingJson(block.partialArgs);
                    delete block.partialArgs;
                    stream.push({ type: "toolcall_end", contentIndex: index, toolCall: block, partial: output });
                }
                output.stopReason = "toolUse";
            } else {
                output.content.push({ type: "text", text: "" });
                stream.push({ type: "text_start", contentIndex: 0, partial: output });
                output.content[0].text += "done";
                stream.push({ type: "text_delta", contentIndex: 0, delta: "done", partial: output });
                stream.push({ type: "text_end", contentIndex: 0, content: "done", partial: output });
            }
            const chars = context.messages.length;
            output.usage = { ...output.usage, input: chars, output: 1, totalTokens: chars + 1 };
            stream.push({ type: "done", reason: output.stopReason, message: output });
            stream.end(output);
        });
        return stream;
    };
}

const llmRoles = new Set(["user", "assistant", "toolResult"]);

async function runOnce() {
    const context = { systemPrompt: "", messages: [], tools: [noop] };
    const config = {
        model,
        convertToLlm: (messages) => messages.filter((m) => llmRoles.has(m.role)),
    };
    const prompt = { role: "user", content: "go", timestamp: Date.now() };
    const startWall = performance.now();
    const startCpu = process.cpuUsage();
    const messages = await runAgentLoop([prompt], context, config, async () => {}, undefined, scriptedStreamFn());
    const cpu = process.cpuUsage(startCpu);
    const wall = performance.now() - startWall;
    const expected = 1 + turns * (1 + calls) + 1;
    if (messages.length !== expected) {
        throw new Error(`expected ${expected} messages, got ${messages.length}`);
    }
    return { wall: wall * 1000, cpu: cpu.user + cpu.system };
}

for (let w = 0; w < 2; w++) await runOnce(); // warm-up: module loading, JIT (as loop_overhead.py's WARM_UP)
const wall = [];
const cpu = [];
for (let r = 0; r < repeats; r++) {
    globalThis.gc?.();
    const { wall: w, cpu: c } = await runOnce();
    wall.push(w / (turns * calls));
    cpu.push(c / (turns * calls));
}
console.log(JSON.stringify({ wall_us: wall, cpu_us: cpu }));
