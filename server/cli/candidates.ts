/**
 * `hangar __complete WORD…` (hidden): what a shell offers after TAB where a command takes the
 * name of something Hangar keeps (a workload, client, group, skill, secret or registry). The
 * words are the command line after `hangar`, the last one the word being completed; the
 * answer is one candidate per line. Values come from the store files, read in this process:
 * no daemon and no container engine (a workload's status would need one: every workload is
 * offered). Commands and options are the completion script's own (completion.ts).
 */
import type { Command, Option } from 'commander';
import type { Environment } from '../environment.js';

/** The hidden command the completion scripts call. */
export const COMPLETE_COMMAND = '__complete';

export type ValueKind = 'workloads' | 'clients' | 'registered-clients' | 'groups' | 'skills' | 'secrets' | 'registries' | 'shells';

/**
 * The kinds of a command's operands, by command path, one per argument; a variadic last
 * argument takes its kind for every further operand. Absent: nothing stored to offer.
 */
export const OPERAND_KINDS: Readonly<Record<string, readonly (ValueKind | undefined)[]>> = {
	'group info': ['groups'],
	'group rm': ['groups'],
	'client register': ['clients'],
	'client unregister': ['registered-clients'],
	'registry info': ['registries'],
	'registry refresh': ['registries'],
	'registry rm': ['registries'],
	'secret set': ['secrets'],
	'secret rm': ['secrets'],
	signin: ['workloads'],
	info: ['workloads'],
	export: ['workloads'],
	edit: ['workloads'],
	stop: ['workloads'],
	restart: ['workloads'],
	rm: ['workloads'],
	logs: ['workloads'],
	'mcp tools': ['workloads'],
	'mcp call': ['workloads'],
	'mcp prompts': ['workloads'],
	'mcp prompt': ['workloads'],
	'mcp resources': ['workloads'],
	'mcp read': ['workloads'],
	'tools ls': ['workloads'],
	'tools diff': ['workloads'],
	'tools approve': ['workloads'],
	'skill info': ['skills'],
	'skill rm': ['skills'],
	'skill upgrade': ['skills'],
	completion: ['shells'],
};

/** The kinds of option values, by long option name, on whichever command has the option. */
export const OPTION_KINDS: Readonly<Record<string, ValueKind>> = {
	'--group': 'groups',
	'--client': 'clients',
	'--registry': 'registries',
};

export const SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;

/**
 * What completion reads of a command: its names, options, arguments and subcommands. The
 * build writes the whole tree's into commands.json, so `hangar __complete` answers without
 * building the command tree (whose areas load the contract).
 */
export interface CommandShape {
	readonly name: string;
	readonly aliases: readonly string[];
	readonly options: readonly OptionShape[];
	/** Whether each declared argument is variadic, in order. */
	readonly variadic: readonly boolean[];
	readonly commands: readonly CommandShape[];
}

export interface OptionShape {
	readonly long?: string;
	readonly short?: string;
	/** Whether a value follows it (`--group NAME`). */
	readonly takesValue: boolean;
}

/** The shape of `command` and of every command under it. */
export function shapeOf(command: Command): CommandShape {
	return {
		name: command.name(),
		aliases: command.aliases(),
		options: command.options.map((option: Option) => ({
			...(option.long ? { long: option.long } : {}),
			...(option.short ? { short: option.short } : {}),
			takesValue: option.required || option.optional,
		})),
		variadic: command.registeredArguments.map((argument) => argument.variadic),
		commands: command.commands.map(shapeOf),
	};
}

/** The kind of value `words` (the last one being typed) expects there, if it names something kept. */
export function kindAt(program: CommandShape, words: readonly string[]): ValueKind | undefined {
	let command = program;
	let path: string[] = [];
	let awaiting: OptionShape | undefined;
	let operands = 0;
	for (const word of words.slice(0, -1)) {
		if (awaiting) {
			awaiting = undefined;
		} else if (word.startsWith('-')) {
			const option = command.options.find((candidate) => candidate.long === word || candidate.short === word);
			if (option?.takesValue) awaiting = option;
		} else {
			const sub = operands === 0 ? command.commands.find((candidate) => candidate.name === word || candidate.aliases.includes(word)) : undefined;
			if (sub) {
				command = sub;
				path = [...path, sub.name];
			} else operands++;
		}
	}
	if (awaiting) return awaiting.long ? OPTION_KINDS[awaiting.long] : undefined;
	if ((words.at(-1) ?? '').startsWith('-')) return undefined;
	const kinds = OPERAND_KINDS[path.join(' ')];
	const declared = command.variadic;
	if (!kinds || declared.length === 0) return undefined;
	const slot = Math.min(operands, declared.length - 1);
	if (operands > slot && !declared[slot]) return undefined;
	return kinds[slot];
}

/** The names of `kind` kept in this Hangar home; none when they cannot be read (no prompt, no error). */
export async function valuesOf(kind: ValueKind, environment: Environment, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
	const { paths } = environment;
	const names = async (): Promise<string[]> => {
		switch (kind) {
			case 'shells':
				return [...SHELLS];
			case 'clients':
				return [...(await import('../../protocol/common.js')).CLIENT_APPS];
			case 'groups': {
				const { GroupStore } = await import('../groups/store.js');
				return (await new GroupStore(paths).list()).map((group) => group.name);
			}
			case 'registered-clients': {
				const [{ GroupStore }, { clientsStateDocument }] = await Promise.all([import('../groups/store.js'), import('../clients/state.js')]);
				const [groups, state] = await Promise.all([new GroupStore(paths).list(), clientsStateDocument(paths).read()]);
				return [...groups.flatMap((group) => group.registered_clients), ...state.global, ...state.projects.map((project) => project.client)];
			}
			case 'workloads': {
				const { workloadNames } = await import('../runspec/workloadNames.js');
				return workloadNames(paths);
			}
			case 'skills': {
				const { SkillRecords } = await import('../skills/store.js');
				return (await new SkillRecords(paths).list()).map((record) => record.name);
			}
			case 'secrets': {
				const { SecretsService } = await import('../secrets/service.js');
				return (await new SecretsService(environment, env).listKeys()).map((secret) => secret.key);
			}
			case 'registries': {
				const { RegistryConfigStore } = await import('../registry/config.js');
				return (await new RegistryConfigStore(paths).entries()).map((entry) => entry.name);
			}
		}
	};
	return [...new Set(await names().catch(() => []))].sort();
}

/** Answers `hangar __complete WORD…`: the candidates that start with the word being typed. */
export async function complete(program: CommandShape, words: readonly string[], environment: Environment): Promise<string[]> {
	const kind = kindAt(program, words.length ? words : ['']);
	if (!kind) return [];
	const typed = words.at(-1) ?? '';
	return (await valuesOf(kind, environment)).filter((value) => value.startsWith(typed));
}
