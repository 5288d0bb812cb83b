//! `org.freedesktop.DBus.Introspectable` of each object: the XML that
//! `busctl introspect` and `gdbus introspect` read, naming the methods,
//! signals and properties served, with systemd's signatures
//! (`org.freedesktop.systemd1(5)`).

use crate::props::Props;

const HEADER: &str =
    "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n\
\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n";

const STANDARD: &str = r#" <interface name="org.freedesktop.DBus.Peer">
  <method name="Ping"/>
  <method name="GetMachineId"><arg type="s" name="machine_uuid" direction="out"/></method>
 </interface>
 <interface name="org.freedesktop.DBus.Introspectable">
  <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
 </interface>
 <interface name="org.freedesktop.DBus.Properties">
  <method name="Get"><arg name="interface_name" direction="in" type="s"/><arg name="property_name" direction="in" type="s"/><arg name="value" direction="out" type="v"/></method>
  <method name="GetAll"><arg name="interface_name" direction="in" type="s"/><arg name="props" direction="out" type="a{sv}"/></method>
  <method name="Set"><arg name="interface_name" direction="in" type="s"/><arg name="property_name" direction="in" type="s"/><arg name="value" direction="in" type="v"/></method>
  <signal name="PropertiesChanged"><arg type="s" name="interface_name"/><arg type="a{sv}" name="changed_properties"/><arg type="as" name="invalidated_properties"/></signal>
 </interface>
"#;

/// The manager's methods: name, in-signature, out-signature.
pub const MANAGER_METHODS: &[(&str, &str, &str)] = &[
    ("GetUnit", "s", "o"),
    ("LoadUnit", "s", "o"),
    ("GetUnitByPID", "u", "o"),
    ("GetUnitProcesses", "s", "a(sus)"),
    ("ListUnits", "", "a(ssssssouso)"),
    ("ListUnitsFiltered", "as", "a(ssssssouso)"),
    ("ListUnitsByPatterns", "asas", "a(ssssssouso)"),
    ("ListUnitsByNames", "as", "a(ssssssouso)"),
    ("StartUnit", "ss", "o"),
    ("StopUnit", "ss", "o"),
    ("RestartUnit", "ss", "o"),
    ("ReloadUnit", "ss", "o"),
    ("TryRestartUnit", "ss", "o"),
    ("ReloadOrRestartUnit", "ss", "o"),
    ("ReloadOrTryRestartUnit", "ss", "o"),
    ("EnqueueUnitJob", "sss", "uososa(uosos)"),
    ("EnqueueMarkedJobs", "", "ao"),
    ("KillUnit", "ssi", ""),
    ("ResetFailed", "", ""),
    ("ResetFailedUnit", "s", ""),
    ("CleanUnit", "sas", ""),
    ("BindMountUnit", "sssbb", ""),
    ("AttachProcessesToUnit", "ssau", ""),
    ("FreezeUnit", "s", ""),
    ("ThawUnit", "s", ""),
    ("RefUnit", "s", ""),
    ("UnrefUnit", "s", ""),
    ("StartTransientUnit", "ssa(sv)a(sa(sv))", "o"),
    ("AbandonScope", "s", ""),
    ("GetJob", "u", "o"),
    ("ListJobs", "", "a(usssoo)"),
    ("CancelJob", "u", ""),
    ("Subscribe", "", ""),
    ("Unsubscribe", "", ""),
    ("Reload", "", ""),
    ("Reexecute", "", ""),
    ("PowerOff", "", ""),
    ("Reboot", "", ""),
    ("Halt", "", ""),
    ("ListUnitFiles", "", "a(ss)"),
    ("ListUnitFilesByPatterns", "asas", "a(ss)"),
    ("GetUnitFileState", "s", "s"),
    ("GetUnitFileLinks", "sb", "as"),
    ("EnableUnitFiles", "asbb", "ba(sss)"),
    ("DisableUnitFiles", "asb", "a(sss)"),
    ("EnableUnitFilesWithFlags", "ast", "ba(sss)"),
    ("DisableUnitFilesWithFlags", "ast", "a(sss)"),
    ("ReenableUnitFiles", "asbb", "ba(sss)"),
    ("PresetUnitFiles", "asbb", "ba(sss)"),
    ("PresetUnitFilesWithMode", "assbb", "ba(sss)"),
    ("PresetAllUnitFiles", "sbb", "a(sss)"),
    ("RevertUnitFiles", "as", "a(sss)"),
    ("MaskUnitFiles", "asbb", "a(sss)"),
    ("UnmaskUnitFiles", "asb", "a(sss)"),
    ("SetDefaultTarget", "sb", "a(sss)"),
    ("AddDependencyUnitFiles", "asssbb", "a(sss)"),
    ("GetDefaultTarget", "", "s"),
    ("SetUnitProperties", "sba(sv)", ""),
    ("SetEnvironment", "as", ""),
    ("UnsetEnvironment", "as", ""),
    ("UnsetAndSetEnvironment", "asas", ""),
];

/// The manager's signals: name and argument signatures.
const MANAGER_SIGNALS: &[(&str, &[&str])] = &[
    ("UnitNew", &["s", "o"]),
    ("UnitRemoved", &["s", "o"]),
    ("JobNew", &["u", "o", "s"]),
    ("JobRemoved", &["u", "o", "s", "s"]),
    ("StartupFinished", &["t", "t", "t", "t", "t", "t"]),
    ("Reloading", &["b"]),
];

/// The unit interface's methods.
pub const UNIT_METHODS: &[(&str, &str, &str)] = &[
    ("Start", "s", "o"),
    ("Stop", "s", "o"),
    ("Restart", "s", "o"),
    ("Reload", "s", "o"),
    ("TryRestart", "s", "o"),
    ("ReloadOrRestart", "s", "o"),
    ("ReloadOrTryRestart", "s", "o"),
    ("Kill", "si", ""),
    ("ResetFailed", "", ""),
    ("Clean", "as", ""),
    ("Freeze", "", ""),
    ("Thaw", "", ""),
    ("Ref", "", ""),
    ("Unref", "", ""),
];

/// A service's interface's methods.
pub const SERVICE_METHODS: &[(&str, &str, &str)] = &[("BindMount", "ssbb", "")];

/// A scope's interface's methods.
pub const SCOPE_METHODS: &[(&str, &str, &str)] = &[("Abandon", "", "")];

/// Splits a signature into its complete types.
fn split(sig: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for c in sig.chars() {
        cur.push(c);
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth -= 1,
            'a' => continue,
            _ => {}
        }
        if depth == 0 {
            out.push(std::mem::take(&mut cur));
        }
    }
    out
}

fn methods(xml: &mut String, list: &[(&str, &str, &str)]) {
    for (name, input, output) in list {
        xml.push_str(&format!("  <method name=\"{name}\">"));
        for t in split(input) {
            xml.push_str(&format!("<arg type=\"{t}\" direction=\"in\"/>"));
        }
        for t in split(output) {
            xml.push_str(&format!("<arg type=\"{t}\" direction=\"out\"/>"));
        }
        xml.push_str("</method>\n");
    }
}

fn properties(xml: &mut String, props: &Props) {
    for (name, v) in props {
        // The manager's log settings and service watchdogs are what `Set`
        // changes.
        let access = if matches!(*name, "LogLevel" | "LogTarget" | "ServiceWatchdogs") {
            "readwrite"
        } else {
            "read"
        };
        xml.push_str(&format!(
            "  <property name=\"{name}\" type=\"{}\" access=\"{access}\"/>\n",
            v.value_signature()
        ));
    }
}

/// One interface of an object: its methods, signals and properties.
pub struct Interface<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its methods.
    pub methods: &'a [(&'a str, &'a str, &'a str)],
    /// Whether it has the manager's signals.
    pub manager_signals: bool,
    /// Its properties.
    pub props: Props,
}

/// The manager's interface description.
pub fn manager_interface(props: Props) -> Interface<'static> {
    Interface {
        name: crate::props::MANAGER,
        methods: MANAGER_METHODS,
        manager_signals: true,
        props,
    }
}

/// The XML of an object with `interfaces` and child nodes `children`.
pub fn xml(interfaces: &[Interface<'_>], children: &[String]) -> String {
    let mut out = String::from(HEADER);
    out.push_str("<node>\n");
    out.push_str(STANDARD);
    for i in interfaces {
        out.push_str(&format!(" <interface name=\"{}\">\n", i.name));
        methods(&mut out, i.methods);
        if i.manager_signals {
            for (name, args) in MANAGER_SIGNALS {
                out.push_str(&format!("  <signal name=\"{name}\">"));
                for a in *args {
                    out.push_str(&format!("<arg type=\"{a}\"/>"));
                }
                out.push_str("</signal>\n");
            }
        }
        properties(&mut out, &i.props);
        out.push_str(" </interface>\n");
    }
    for c in children {
        out.push_str(&format!(" <node name=\"{c}\"/>\n"));
    }
    out.push_str("</node>\n");
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn signatures_split_into_complete_types() {
        assert_eq!(split("ssa(sv)a(sa(sv))"), ["s", "s", "a(sv)", "a(sa(sv))"]);
        assert_eq!(split("asbb"), ["as", "b", "b"]);
        assert_eq!(split(""), Vec::<String>::new());
        assert_eq!(split("a{sv}u"), ["a{sv}", "u"]);
    }

    #[test]
    fn the_xml_names_what_is_served() {
        let x = xml(&[manager_interface(vec![])], &["unit".to_string()]);
        assert!(x.contains("<method name=\"StartUnit\"><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"o\" direction=\"out\"/></method>"), "{x}");
        assert!(x.contains("<signal name=\"JobRemoved\"><arg type=\"u\"/><arg type=\"o\"/><arg type=\"s\"/><arg type=\"s\"/></signal>"));
        assert!(x.contains("<node name=\"unit\"/>"));
    }
}
