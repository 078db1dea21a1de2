export const silentProgress = {
    begin() { },
    report() { },
    end() { },
};
export function contextFor(signal, progress = silentProgress) {
    return { signal, progress };
}
//# sourceMappingURL=context.js.map