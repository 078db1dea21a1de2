/**
 * Official images a package's build starts from unless told otherwise (docs/packages.md dates
 * them). Apart from dockerfile.ts, so that `hangar run --help` names them without loading it.
 */
import type { Scheme } from './reference.js';

export const DEFAULT_IMAGES: Readonly<Record<Scheme, string>> = {
	npx: 'node:24-slim',
	uvx: 'ghcr.io/astral-sh/uv:python3.13-bookworm-slim',
	go: 'golang:1.25',
};
export const DEFAULT_GO_FINAL_IMAGE = 'gcr.io/distroless/static-debian12:nonroot';
