/**
 * Sends a proxy's OTLP requests from a worker thread of its own, where the official OTLP/HTTP
 * transport runs (otlpSenderWorker.ts). The proxy encodes each request on its thread and hands
 * the bytes over; the thread sends them, with the transport's retries, headers, TLS and
 * `OTEL_EXPORTER_OTLP_*` variables, and tells how it went.
 *
 * Why a thread: on the proxy's own, each export's HTTP request ran through the same Node
 * internals (streams, sockets, outgoing messages) as the proxy's clients, with objects of other
 * shapes, and V8 threw away and rebuilt its optimised code for them after every export. With a
 * batch of spans sent about every second, the proxy spent a quarter more CPU per sequential call;
 * from a thread, what encoding the spans costs (docs/benchmarks.md).
 */
import { Worker } from 'node:worker_threads';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { Logger } from '../../../log.js';
import type { exporterOptions } from '../../../telemetry/otlp.js';

export type OtlpSignal = 'traces' | 'metrics';

/** An encoded export request, and how many items (spans, data points) it carries. */
export interface OtlpRequest {
	readonly body: Uint8Array;
	readonly count: number;
}

/** The worker's data: each sent signal's endpoint, as `exporterOptions` gives it. */
export type SenderOptions = { readonly [signal in OtlpSignal]?: ReturnType<typeof exporterOptions> };

export type SenderMessage = ({ readonly type: 'send'; readonly id: number; readonly signal: OtlpSignal } & OtlpRequest) | { readonly type: 'shutdown' };

export type SenderAnswer = { readonly type: 'sent'; readonly id: number; readonly code: ExportResultCode; readonly error?: string } | { readonly type: 'closed' };

/** The thread's module, next to this one in the build. */
const WORKER = new URL('./otlpSenderWorker.js', import.meta.url);

export class OtlpSender {
	readonly #worker: Worker;
	readonly #waiting = new Map<number, (result: ExportResult) => void>();
	#nextId = 0;
	/** Why the thread is gone, once it is: later requests fail at once. */
	#gone: Error | undefined;
	#closed: Promise<void> | undefined;

	constructor(
		options: SenderOptions,
		private readonly log: Logger,
		worker: URL = WORKER,
	) {
		this.#worker = new Worker(worker, { workerData: options });
		// The proxy lives as long as its server: the sender never keeps it up.
		this.#worker.unref();
		this.#worker.on('message', (answer: SenderAnswer) => {
			if (answer.type !== 'sent') return;
			const done = this.#waiting.get(answer.id);
			this.#waiting.delete(answer.id);
			done?.({ code: answer.code, error: answer.error === undefined ? undefined : new Error(answer.error) });
		});
		this.#worker.on('error', (error) => this.#lost(error));
		this.#worker.on('exit', (code) => this.#lost(new Error(`the OTLP sender's thread ended (exit code ${code})`)));
	}

	/**
	 * Sends `request` to `signal`'s endpoint; `done` hears how it went. The body's memory moves to
	 * the thread rather than being copied: it must be the body's own (not a slice of Node's
	 * buffer pool), and the caller does not touch it again.
	 */
	send(signal: OtlpSignal, request: OtlpRequest, done: (result: ExportResult) => void): void {
		if (this.#gone) return done({ code: ExportResultCode.FAILED, error: this.#gone });
		// A body already moved is empty here; posted again, it would vanish without an answer.
		if (!request.body.byteLength) return done({ code: ExportResultCode.FAILED, error: new Error('the request has no body (was it sent already?)') });
		const id = this.#nextId++;
		const message: SenderMessage = { type: 'send', id, signal, body: request.body, count: request.count };
		try {
			this.#worker.postMessage(message, [request.body.buffer as ArrayBuffer]);
		} catch (error) {
			return done({ code: ExportResultCode.FAILED, error: error as Error });
		}
		this.#waiting.set(id, done);
	}

	/** Sends what is under way, then ends the thread. */
	shutdown(): Promise<void> {
		this.#closed ??= new Promise<void>((resolve) => {
			if (this.#gone) return resolve();
			this.#worker.on('message', (answer: SenderAnswer) => answer.type === 'closed' && resolve());
			this.#worker.once('exit', () => resolve());
			this.#worker.postMessage({ type: 'shutdown' } satisfies SenderMessage);
		}).then(async () => {
			await this.#worker.terminate();
		});
		return this.#closed;
	}

	#lost(error: Error): void {
		if (!this.#gone && !this.#closed) this.log.warn(`telemetry is no longer sent: ${error.message}`);
		this.#gone ??= error;
		for (const done of this.#waiting.values()) done({ code: ExportResultCode.FAILED, error });
		this.#waiting.clear();
	}
}
