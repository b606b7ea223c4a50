// The attachment types refused at DATA by default (ATTACHMENT_REFUSED_EXTENSIONS;
// docs/decisions.md "Attachment policy"), shared by the configuration and the policy.

/** What Windows runs when it is opened: programs, scripts, installers, control panel items and shortcuts. */
export const DEFAULT_REFUSED_EXTENSIONS = ['exe', 'scr', 'com', 'pif', 'bat', 'cmd', 'msi', 'cpl', 'hta', 'js', 'jse', 'vbs', 'vbe', 'wsf', 'wsh', 'ps1', 'lnk'];
