/** The image of an aggregate, `group://NAME`, without zod: read by a workload's proxy, which does not load it. */
const GROUP_SCHEME = 'group://';

/** The group an aggregate's image `group://NAME` names, or undefined for any other image. */
export function groupOfImage(image: string | undefined): string | undefined {
	return image?.startsWith(GROUP_SCHEME) ? image.slice(GROUP_SCHEME.length) : undefined;
}
