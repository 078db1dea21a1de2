/**
 * Whether the container's outbound traffic is limited to the permission profile's allow-lists:
 * network isolation is on (the default) and the profile has outbound rules that do not allow all.
 */
export function isolatesNetwork(workload) {
    const network = workload.permission_profile?.network;
    if (workload.isolate_network === false || !workload.container_name || network?.mode === 'none' || !network?.outbound)
        return false;
    return !network.outbound.insecure_allow_all;
}
/** The isolated network of a workload (one per workload, named like its container). */
export function networkNameOf(workload) {
    return workload.container_name;
}
//# sourceMappingURL=network.js.map