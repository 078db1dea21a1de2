/**
 * The globals a script of an aggregate sees (`tools`, `call_tool`, `find_tools`, `describe`,
 * `console`), built in its context by the host (engine.ts) rather than evaluated from a prelude's
 * source: compiling that source was half of the engine's work for each script's context. Only the
 * trap of the `tools` proxies is compiled (one small function); every other function is the host's.
 *
 * What a script sees is what the prelude of source gave it:
 * - `tools.<member>.<tool>(args)` and `call_tool(name, args)` call the tool (`args` absent: `{}`),
 *   `find_tools(query, limit)` and `describe(name)` search and describe; each answers a promise
 *   of the host's JSON answer, parsed, or rejects with an Error made at the call (its stack holds
 *   the script's line that called) carrying the host's message;
 * - a tool or member the script does not see is a function whose promise rejects with "unknown
 *   tool …", not undefined; the names an object has (its own and inherited), symbols, `then` and
 *   `toJSON` are what they are; `tools` and its members are frozen, their names defined, never
 *   assigned (a name such as `__proto__` stays a name);
 * - `console.log` (and `info`, `warn`, `error`, `debug`) logs its arguments joined by spaces, each
 *   string as it is and any other value as JSON (or `String(value)` when it cannot be JSON).
 * JSON and Error are the context's own, taken before any script ran: a script that replaces them
 * changes nothing here.
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from 'quickjs-emscripten-core';

/** Each member's tools, by the name a script calls them: member → tool → exposed name. */
export type Catalog = Record<string, Record<string, string>>;

/** Marks a prelude that is a catalog (JSON after it) rather than source. */
const MARK = '\u0000hangar-tools\u0000';

/** The prelude of an aggregate's scripts: its catalog, for the engine to build the globals from. */
export function toolsPrelude(catalog: Catalog): string {
	return MARK + JSON.stringify(catalog);
}

/** The catalog a prelude carries, or undefined for a prelude of source. */
export function catalogOf(prelude: string): Catalog | undefined {
	return prelude.startsWith(MARK) ? (JSON.parse(prelude.slice(MARK.length)) as Catalog) : undefined;
}

/** What the globals call: the script that runs in the context. */
export interface ToolHost {
	/**
	 * Sends the host call `fn` with `args` (JSON text) and answers the promise the script gets;
	 * `failure` (owned from then on) is the Error a failed call rejects with.
	 */
	ask(fn: string, args: string, failure: QuickJSHandle): QuickJSHandle;
	log(text: string): void;
}

/** The trap of `tools` and of each member's tools: what the source prelude's was. */
const NAMED = `(target, missing) => new Proxy(Object.freeze(target), { get: (object, key) => (typeof key !== 'string' || key in object || key === 'then' || key === 'toJSON' ? object[key] : missing(key)) })`;

const unknownTool = (member: string, tool: string) => `unknown tool ${JSON.stringify(`${member}.${tool}`)} (hidden by policy or filter, or not served; find_tools finds tools by what they do)`;

/**
 * Builds the globals of `catalog` in `context`, calling `host()` (the script running); `json`
 * and `error` are the context's JSON and Error, kept alive by the caller while the context lives.
 * Returns the handles to free with the context.
 */
export function installTools(context: QuickJSContext, catalog: Catalog, host: () => ToolHost, { json, error }: { json: QuickJSHandle; error: QuickJSHandle }): QuickJSHandle[] {
	const stringify = context.getProp(json, 'stringify');
	const string = context.getProp(context.global, 'String');
	const named = evaluated(context, NAMED);
	// The keys of each call's arguments, made once: a key given as a string is made and freed at each use.
	const keys = { name: context.newString('name'), arguments: context.newString('arguments'), query: context.newString('query'), limit: context.newString('limit') };
	const kept = [stringify, string, named, ...Object.values(keys)];
	const define = (target: QuickJSHandle, key: string | QuickJSHandle, value: QuickJSHandle) => context.defineProp(target, key, { value, enumerable: true });

	/** An Error made now, from the host, its stack the script's. */
	const newFailure = (message?: QuickJSHandle): VmCallResult<QuickJSHandle> => (message ? context.callFunction(error, context.undefined, message) : context.callFunction(error, context.undefined));

	/** `fn` with the JSON of an object of `fields` (undefined ones left out, as JSON does). */
	const request = (fn: string, fields: ReadonlyArray<readonly [QuickJSHandle, QuickJSHandle]>): VmCallResult<QuickJSHandle> => {
		const made = newFailure();
		if (made.error) return made;
		const failure = made.value;
		const object = context.newObject();
		for (const [key, value] of fields) define(object, key, value);
		const text = context.callFunction(stringify, context.undefined, object);
		object.dispose();
		if (text.error) {
			// As the source prelude's `ask`: the failure takes the message of what JSON.stringify threw.
			text.error.consume((thrown) => context.getProp(thrown, 'message')).consume((message) => context.setProp(failure, 'message', message));
			const rejected = context.newPromise();
			rejected.reject(failure);
			failure.dispose();
			return { value: rejected.handle };
		}
		return { value: host().ask(fn, text.value.consume((value) => context.getString(value)), failure) };
	};
	const call = (name: QuickJSHandle, args: QuickJSHandle | undefined): VmCallResult<QuickJSHandle> => {
		if (args === undefined || context.typeof(args) === 'undefined') return context.newObject().consume((empty) => request('call', [[keys.name, name], [keys.arguments, empty]]));
		return request('call', [[keys.name, name], [keys.arguments, args]]);
	};
	/** A function (of the host) that rejects as the source prelude's unknown tool did. */
	const unknown = (member: string, tool: string) =>
		context.newFunction(tool, () => {
			const made = context.newString(unknownTool(member, tool)).consume((message) => newFailure(message));
			if (made.error) return made;
			const rejected = context.newPromise();
			made.value.consume((failure) => rejected.reject(failure));
			return rejected.handle;
		});
	const proxyOf = (target: QuickJSHandle, missing: QuickJSHandle): QuickJSHandle => {
		const made = context.callFunction(named, context.undefined, target, missing);
		if (made.error) throw new Error(`the sandbox could not start: ${JSON.stringify(made.error.consume((thrown) => context.dump(thrown)))}`);
		return made.value;
	};
	const missingOf = (member: string) => context.newFunction('missing', (key) => unknown(member, context.getString(key)));

	const tools = context.newObject();
	for (const [member, names] of Object.entries(catalog)) {
		const space = context.newObject();
		for (const [tool, exposed] of Object.entries(names)) {
			const exposedName = context.newString(exposed);
			kept.push(exposedName);
			context.newFunction(tool, (args) => call(exposedName, args)).consume((fn) => define(space, tool, fn));
		}
		const missing = missingOf(member);
		proxyOf(space, missing).consume((proxy) => define(tools, member, proxy));
		missing.dispose();
		space.dispose();
	}
	const missingMember = context.newFunction('missing', (key) => {
		const member = context.getString(key);
		return context.newObject().consume((empty) => missingOf(member).consume((missing) => proxyOf(empty, missing)));
	});
	proxyOf(tools, missingMember).consume((proxy) => context.setProp(context.global, 'tools', proxy));
	missingMember.dispose();
	tools.dispose();

	const global = (name: string, fn: QuickJSHandle) => fn.consume((handle) => context.setProp(context.global, name, handle));
	global('call_tool', context.newFunction('call', (name, args) => call(name ?? context.undefined, args)));
	global('find_tools', context.newFunction('find_tools', (query, limit) => request('find', [[keys.query, query ?? context.undefined], [keys.limit, limit ?? context.undefined]])));
	global('describe', context.newFunction('describe', (name) => request('describe', [[keys.name, name ?? context.undefined]])));

	const print = context.newFunction('log', (...parts: QuickJSHandle[]) => {
		const texts: string[] = [];
		for (const part of parts) {
			if (context.typeof(part) === 'string') {
				texts.push(context.getString(part));
				continue;
			}
			let made = context.callFunction(stringify, context.undefined, part);
			if (made.error) {
				made.error.dispose();
				made = context.callFunction(string, context.undefined, part);
				if (made.error) return made;
			}
			texts.push(made.value.consume((text) => (context.typeof(text) === 'string' ? context.getString(text) : '')));
		}
		host().log(texts.join(' '));
		return undefined;
	});
	const console = context.newObject();
	for (const level of ['log', 'info', 'warn', 'error', 'debug']) define(console, level, print);
	print.dispose();
	context.getProp(context.global, 'Object').consume((object) => context.getProp(object, 'freeze').consume((freeze) => context.callFunction(freeze, object, console))).dispose();
	context.setProp(context.global, 'console', console);
	console.dispose();
	return kept;
}

function evaluated(context: QuickJSContext, source: string): QuickJSHandle {
	const result = context.evalCode(source, 'tools.js');
	if (result.error) throw new Error(`the sandbox could not start: ${JSON.stringify(result.error.consume((thrown) => context.dump(thrown)))}`);
	return result.value;
}
